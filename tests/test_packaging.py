"""conf/ ships with the package: a wheel or ``pip install .`` installs the repository's ``conf/`` as
``contentx_udf/conf/`` (package data reached through the symbolic link ``contentx_udf/conf``), and
``contentx_udf.paths.CONF_DIR`` finds it there, or the repository's ``conf/`` in a checkout or an
editable install.  No wheel is built: setuptools' own reader of pyproject.toml and its ``build_py``
say which files a build would copy."""

from __future__ import annotations

import runpy
import shutil
import warnings
from pathlib import Path

from setuptools.config.pyprojecttoml import read_configuration
from setuptools.dist import Distribution

from contentx_udf import paths

REPO = Path(__file__).resolve().parent.parent


def conf_files() -> set[str]:
    files = {p.name for p in (REPO / "conf").iterdir() if p.is_file()}
    assert "spark-defaults.conf" in files and "log4j2.properties" in files
    return files


def built_files(monkeypatch) -> set[Path]:
    """The files ``build_py`` puts in a wheel (relative to its build directory), as setuptools reads
    pyproject.toml's ``[tool.setuptools]`` (packages found, package data)."""
    monkeypatch.chdir(REPO)  # (package data globs are relative to the project)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (setuptools' notices about its own config support)
        # ignore_option_errors: an older setuptools here than the build's (pyproject.toml's
        # build-system) may not know every [project] field; the [tool.setuptools] table is read all the same
        config = read_configuration(REPO / "pyproject.toml", expand=True, ignore_option_errors=True)
        table = config["tool"]["setuptools"]
        dist = Distribution(
            {
                "name": "contentx",
                "script_name": "setup.py",
                "packages": table["packages"],
                "package_dir": table.get("package-dir", {}),
                "package_data": table["package-data"],
            }
        )
        build_py = dist.get_command_obj("build_py")
        build_py.ensure_finalized()
        return {Path(out).relative_to(build_py.build_lib) for out in build_py.get_outputs(include_bytecode=0)}


def test_a_build_ships_every_file_of_conf_as_contentx_udf_conf(monkeypatch):
    built = built_files(monkeypatch)
    assert Path("contentx_udf/paths.py") in built  # (the reading of the config itself worked)
    missing = {name for name in conf_files() if Path("contentx_udf/conf", name) not in built}
    assert not missing, f"conf/ files a wheel would not hold: {sorted(missing)}"


def test_contentx_udf_conf_is_the_repositorys_conf_and_conf_dir_reads_it():
    link = REPO / "contentx_udf" / "conf"
    assert link.is_symlink() and link.resolve() == (REPO / "conf").resolve()
    # a checkout (and an editable install) reads the top-level conf/: edits there take effect
    assert paths.CONF_DIR == (REPO / "conf").resolve()
    assert (paths.CONF_DIR / "spark-defaults.conf").is_file()


def test_conf_dir_of_an_installed_package_and_of_a_checkout_without_symlinks(tmp_path):
    installed = tmp_path / "site-packages" / "contentx_udf"
    (installed / "conf").mkdir(parents=True)
    (installed / "conf" / "spark-defaults.conf").write_text("spark.master local[*,3]\n")
    shutil.copy(paths.__file__, installed / "paths.py")
    assert runpy.run_path(str(installed / "paths.py"))["CONF_DIR"] == installed / "conf"

    checkout = tmp_path / "checkout"
    (checkout / "contentx_udf").mkdir(parents=True)
    (checkout / "conf").mkdir()
    (checkout / "contentx_udf" / "conf").write_text("../conf")  # (git's stand-in for a link)
    shutil.copy(paths.__file__, checkout / "contentx_udf" / "paths.py")
    assert runpy.run_path(str(checkout / "contentx_udf" / "paths.py"))["CONF_DIR"] == checkout / "conf"


def test_the_sdist_holds_the_cython_sources(monkeypatch):
    """setup.py cythonizes the ``.pyx`` files (which cimport ``.pxd`` files): MANIFEST.in must put
    them in the sdist (setuptools would take only the generated ``.c``), or a wheel built from the
    sdist fails.  Read with setuptools' own manifest ``FileList``."""
    from setuptools.command.egg_info import FileList

    monkeypatch.chdir(REPO)
    files = FileList()
    for line in (REPO / "MANIFEST.in").read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            files.process_template_line(line)
    sources = {
        str(p.relative_to(REPO))
        for pattern in ("*.pyx", "*.pxd")
        for p in (REPO / "contentx_udf").rglob(pattern)
    }
    assert any(s.endswith("page/_compiled.pyx") for s in sources)
    assert not sources - set(files.files), f"not in the sdist: {sorted(sources - set(files.files))}"
