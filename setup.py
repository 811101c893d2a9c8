"""Build of the compiled passes (``contentx_udf/page/_compiled.pyx``, Cython); the rest of the
package metadata is in pyproject.toml."""

from Cython.Build import cythonize
from setuptools import Extension, setup

setup(
    ext_modules=cythonize(
        [
            Extension(
                "contentx_udf.page._compiled",
                ["contentx_udf/page/_compiled.pyx"],
                extra_compile_args=["-O3"],
                # without a C compiler the install goes on without it: the same results from the
                # Python code, slower (contentx_udf.page.compiled.status(); the job's summary says so)
                optional=True,
            )
        ],
        compiler_directives={"language_level": 3},
    )
)
