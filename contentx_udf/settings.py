"""Every tunable parameter with the papers' defaults, in one visible place.

``DEFAULTS[method]`` holds the parameters of each method; ``COMMON`` holds the bounds shared
by all of them.  Any value can be overridden per call (``extract(html, method, **params)``)
or from the job configuration (``conf/extract.toml``, table ``[params.<method>]``).
Each algorithm module documents where its defaults come from (paper section/equation).
"""

from __future__ import annotations

import math
from typing import Any

#: WCXB page types in the order the tables show them (the combined model's page-type scores, the
#: corpus job's ``--page-types``).
PAGE_TYPES = ("article", "documentation", "service", "forum", "collection", "listing", "product")

#: Method names, in the order tables and reports list them.
METHODS: tuple[str, ...] = (
    "cetr-tm",
    "cetr-km",
    "cetr",
    "cetr-dff",
    "ccb",
    "accb",
    "tccb",
    "coreex",
    "cetd-ds",
    "cectd-s",
    "cectd-ds",
    "combined",
)

#: The method used when none is named: ``combined``, above ``cectd-ds`` (the best seed method) on
#: both development sets (WCXB dev cross-validated, scrapinghub never trained on).
DEFAULT_METHOD = "combined"

#: Bounds shared by all methods (see :class:`contentx_udf.page.document.Limits`).
COMMON: dict[str, Any] = {
    "max_chars": 5_000_000,  # decoded characters parsed per page
    "max_nodes": 200_000,  # DOM nodes flattened per page
    "max_depth": 1_000,  # nesting depth kept before parsing
    "time_limit": 10.0,  # seconds per page and method; 0 disables the limit
}

# CETR (Weninger et al. WWW'10 overview; Weninger & Hsu, histogram clustering).  The paper's
# value is in parentheses where the dev set chose otherwise (cetr.py's docstring has the F1s).
_CETR_COMMON: dict[str, Any] = {
    # overview FAQ: a newline "after 60 (or so) characters" on one-line pages.  Lines longer
    # than rebreak_over (60) are cut every rebreak_chars (60), at whitespace or between tags.
    "rebreak_chars": 150,
    "rebreak_over": 200,
    # Gaussian smoothing, histogram paper Eq. 1-3 (3: the overview's "radius of 3"); with
    # sigma_from_histogram the std of the TTR histogram is used (the histogram paper's reading).
    "sigma": 5.0,
    "sigma_from_histogram": False,
    # an entity escape (&amp;) counts as one text character (False: raw source characters).
    "count_entities_once": True,
}
# 2-D model (histogram paper Eq. 4): moving-average window alpha = q = 3, k = 3 clusters; the
# dimensions are scaled to [0, 1] before clustering as Weka's default distance does.
_CETR_2D: dict[str, Any] = {**_CETR_COMMON, "alpha": 3, "k": 3, "normalize_dimensions": True}

#: Character-based CCB and ACCB share their parameters (see the CCB comment below).
_CCB_CHARS: dict[str, Any] = {
    "range": 40,
    "threshold": 0.75,
    "sigma_per_range": 1 / 3,
    "max_iter": 100,
    "stop_change_rate": 0.0,
    "whitespace_in_vector": False,
    "attributes_in_vector": False,
    "chars_per_cell": 4,
    "max_blur_work": 400_000_000,
}

#: CETD-DS and CECTD-DS share their parameters (see the CETD comment below).
_CETD_DENSITY_SUM: dict[str, Any] = {
    "lambda_": 1.0,
    "link_only_elements_as_links": True,
    "loose_text_in_sum": True,
    "keep_path_text": True,
    "multiple_blocks": True,
    "block_min_sum_ratio": 0.5,
    "prune_ratio": 0.3,
}

#: Per-method parameters (paper defaults unless a comment says otherwise).
DEFAULTS: dict[str, dict[str, Any]] = {
    # threshold partitioning: content iff smoothed TTR >= lambda_ * std (histogram paper, 1 sigma)
    "cetr-tm": {**_CETR_COMMON, "lambda_": 1.0},
    "cetr-km": {**_CETR_2D, "max_iter": 100},
    "cetr": {**_CETR_2D, "max_iter": 100},
    # density farthest-first: per-cluster normal densities, std floor as Weka's minStdDev
    "cetr-dff": {**_CETR_2D, "min_std_dev": 1e-6},
    # CCB (Gottron 2008) §IV-A: threshold 0.75, range 40 (characters) / 25 (tokens).  The
    # paper gives no sigma for its Gaussian: sigma = sigma_per_range * range.  Stop rule
    # §III-C: the extracted words stop changing (stop_change_rate 0).  Dev-set refinements,
    # paper value in brackets: whitespace and tag attributes left out of the character
    # vector (True, True); TCCB threshold 0.65 (0.75); for speed, the character vector is
    # blurred on cells of chars_per_cell characters (1).  max_blur_work bounds the
    # multiply-adds of all blurs of a page (fewer iterations on huge pages).
    "ccb": dict(_CCB_CHARS),
    "accb": dict(_CCB_CHARS),  # same parameters; anchors are left out of the vector
    "tccb": {
        "range": 25,
        "threshold": 0.65,
        "sigma_per_range": 1 / 3,
        "max_iter": 100,
        "stop_change_rate": 0.0,
        "max_blur_work": 400_000_000,
    },
    # CoreEx (Prasad & Paepcke 2008) §2.1: subset threshold 0.9; §2.1 preprocessing ignores
    # select/form/input/textarea/option.  Paper weights 0.99 / 0.01 (dev-set F1 0.698); the two
    # must sum to 1: 0.9 / 0.1 gives 0.905 (the paper's weights favour one link-free paragraph).
    "coreex": {"weight_ratio": 0.9, "weight_text": 0.1, "subset_threshold": 0.9, "ignore_form_tags": True},
    # CETD (Sun et al. 2011): λ = 1 (§5.5); links, buttons and drop-downs are links (§4.3);
    # link_only_elements_as_links, loose_text_in_sum, keep_path_text: the authors' reference code.
    # Improvements (paper value 0.0 = off): block_min_sum_ratio (an extra content block needs this
    # share of the maximum DensitySum) and prune_ratio (drop block children of a content root
    # whose density is below this share of the root's); see contentx_udf/cetd.py.
    "cetd-ds": dict(_CETD_DENSITY_SUM),
    # CECTD-S §4.3 "weighted averaging with sibling nodes": weight of each neighbour (the paper
    # gives none); inline_follows_block (improvement; paper reading false).
    "cectd-s": {
        "lambda_": 1.0,
        "link_only_elements_as_links": True,
        "sibling_weight": 0.5,
        "inline_follows_block": True,
    },
    "cectd-ds": dict(_CETD_DENSITY_SUM),
    # combined (contentx): a block classifier over every seed signal (methods/combined.py).
    # threshold: probability a block needs to be kept (0 = the model's: per page type, weighted
    # by the page's type probabilities);
    # heading_window: a heading is kept with kept content at most this many blocks after it;
    # template_mix: share of a block's probability replaced by the mean of its template's blocks
    # (0 = off), for templates of at least template_min blocks (both: best in WCXB dev CV);
    # model: path of a model file from `contentx train` ("" = the one shipped in the package);
    # mode: balanced | precision | recall, the page-type thresholds the page's threshold is drawn
    # from (chosen by 5-fold grouped cross-validation on WCXB dev, training.MODE_THRESHOLDS).
    "combined": {
        "threshold": 0.0,
        "heading_window": 2,
        "template_mix": 0.5,
        "template_min": 3,
        "model": "",
        "mode": "balanced",
    },
}

#: The values a text parameter may take, by (method, name).
CHOICES: dict[tuple[str, str], tuple[str, ...]] = {("combined", "mode"): ("balanced", "precision", "recall")}


#: Largest value of a share or probability parameter, by (method, name).
AT_MOST: dict[tuple[str, str], float] = {("combined", "threshold"): 1.0, ("combined", "template_mix"): 1.0}


def _check_value(method: str, name: str, default: Any, value: Any) -> Any:
    where = f"parameter {name!r} of method {method!r}"
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ValueError(f"{where} must be true or false, got {value!r}")
        return value
    if isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
            raise ValueError(f"{where} must be an integer, got {value!r}")
        if value < 0:
            raise ValueError(f"{where} must not be negative, got {value!r}")
        return int(value)
    if isinstance(default, float):
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise ValueError(f"{where} must be a finite number, got {value!r}")
        if value < 0:
            raise ValueError(f"{where} must not be negative, got {value!r}")
        if value > AT_MOST.get((method, name), math.inf):
            raise ValueError(f"{where} must be at most {AT_MOST[method, name]}, got {value!r}")
        return float(value)
    if not isinstance(value, type(default)):
        raise ValueError(f"{where} must be a {type(default).__name__}, got {value!r}")
    choices = CHOICES.get((method, name))
    if choices is not None and value not in choices:
        raise ValueError(f"{where} must be one of {', '.join(choices)}, got {value!r}")
    return value


def check_method(method: str) -> str:
    """Return ``method`` if it is a known method name, else raise ValueError listing them."""
    if method not in DEFAULTS:
        raise ValueError(f"unknown method {method!r}; valid methods: {', '.join(METHODS)}")
    return method


def resolve_params(method: str, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """The method's parameters (COMMON + method defaults) with ``overrides`` applied and checked.

    Raises ValueError for an unknown method, an unknown parameter name or a bad value.
    """
    check_method(method)
    params = {**COMMON, **DEFAULTS[method]}
    for name, value in (overrides or {}).items():
        if name not in params:
            raise ValueError(
                f"unknown parameter {name!r} for method {method!r}; valid parameters: "
                + ", ".join(sorted(params))
            )
        params[name] = _check_value(method, name, params[name], value)
    return params
