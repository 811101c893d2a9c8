"""Build of the compiled passes (``contentx_udf/page/_compiled.pyx``, Cython); the rest of the
package metadata is in pyproject.toml.

Without a working C compiler (or the Python headers) the install goes on without the extension:
one warning line, and the Python code gives the same results, slower
(``contentx_udf.page.compiled.status()``; the job's summary says so)."""

import os
import sys

from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

#: The compiled passes are translated and compiled side by side, one at a time per core (a fresh
#: install on 2 cores: about 35 s of compiling, one after the other before)
JOBS = os.cpu_count() or 1


class BuildExtOrWarn(build_ext):
    """``build_ext`` that turns a failed compilation into one warning line, :data:`JOBS` at once."""

    def finalize_options(self):
        super().finalize_options()
        if self.parallel is None:
            self.parallel = JOBS

    def run(self):
        try:
            super().run()
        except Exception as exc:  # noqa: BLE001 (any compiler failure)
            self._warn(exc)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as exc:  # noqa: BLE001
            self._warn(exc)

    @staticmethod
    def _warn(exc: Exception) -> None:
        print(
            f"WARNING: contentx: the compiled passes were not built ({type(exc).__name__}: {exc}); "
            "the pure-Python code will run, slower",
            file=sys.stderr,
        )


setup(
    ext_modules=cythonize(
        [
            Extension(
                "contentx_udf.page._compiled",
                ["contentx_udf/page/_compiled.pyx"],
                extra_compile_args=["-O3", "-ffp-contract=off"],  # (no fused multiply-add: numpy's roundings)
            ),
            # --line-dedup's line keys and removal (the numpy code in corpus/lines.py gives the same)
            Extension(
                "contentx_udf.corpus._lines",
                ["contentx_udf/corpus/_lines.pyx"],
                extra_compile_args=["-O3"],
            ),
            # the fastText core both predictors below share (_fasttext.pxd: the dictionary, the
            # n-gram buckets, the input rows' sums; cimported by _lid and _quality)
            Extension(
                "contentx_udf.text._fasttext",
                ["contentx_udf/text/_fasttext.pyx"],
                extra_compile_args=["-O3", "-ffp-contract=off"],
            ),
            # fastText's prediction: no fused multiply-add, so its float sums round as fastText's
            Extension(
                "contentx_udf.text._lid",
                ["contentx_udf/text/_lid.pyx"],
                extra_compile_args=["-O3", "-ffp-contract=off"],
            ),
            # quality classifiers: fastText's predict with every label, the same float sums
            Extension(
                "contentx_udf.text._quality",
                ["contentx_udf/text/_quality.pyx"],
                extra_compile_args=["-O3", "-ffp-contract=off"],
            ),
            # token counts for byte-level tokenizers: GPT-2's pre-token split and a pre-token cache
            Extension(
                "contentx_udf.text._tokcount",
                ["contentx_udf/text/_tokcount.pyx"],
                extra_compile_args=["-O3"],
            ),
        ],
        compiler_directives={"language_level": 3},
        nthreads=JOBS,
    ),
    cmdclass={"build_ext": BuildExtOrWarn},
)
