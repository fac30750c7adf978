"""Sphinx configuration of linsep's documentation (built offline by ``make docs``).

The API reference is generated at build time from the ``__all__`` lists of
the public modules (:data:`PUBLIC_MODULES`), so a name added to one of them
appears in the reference without editing any page.
"""

import dataclasses
import doctest
import os
import re
import sys
import warnings
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
# Run from a checkout without installing (``PYTHONPATH=src`` is then not needed).
sys.path.insert(0, str(ROOT / "src"))
os.environ.setdefault("MPLBACKEND", "Agg")

import linsep  # noqa: E402

project = "linsep"
author = "the linsep developers"
copyright = "the linsep developers"
release = version = linsep.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.doctest",
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
# user_guide/generated: tables written by generate_tables.py, included by the pages (not pages themselves)
exclude_patterns = ["_build", "user_guide/generated", "results", "auto_examples/*.ipynb", "auto_examples/*.py", "auto_examples/*.zip",
                    "auto_examples/*.json", "auto_examples/*.md5", "auto_examples/*.pickle"]
templates_path = ["_templates"]
# The Markdown pages (design.md) use GitHub-style fenced code and pipe tables.
myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3
# "ref.citation": a docstring's References may list works its text does not
# cite (numpydoc keeps them); that is not an error in the docstring.
suppress_warnings = ["myst.xref_missing", "ref.citation"]

# -- strictness --------------------------------------------------------------
# Every cross-reference must resolve.  Names of other projects (scikit-learn,
# NumPy, ...) stay plain text: resolving them would need those projects'
# inventories, fetched from the network (intersphinx), and the build is offline.
nitpicky = True
nitpick_ignore_regex = [
    (r"py:.*", r"(sklearn|numpy|scipy|dask|distributed|joblib|matplotlib|pandas)(\..*)?"),
]

# -- executed examples -------------------------------------------------------
# ``make docs`` runs ``sphinx-build -b doctest`` first: every ``>>>`` example of
# the user guide and of the docstrings is executed, and a failing one fails it.
doctest_default_flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE | doctest.DONT_ACCEPT_TRUE_FOR_1
doctest_global_setup = """
import warnings
import numpy as np
from sklearn.exceptions import ConvergenceWarning
warnings.simplefilter("ignore", ConvergenceWarning)
"""

# -- offline math --------------------------------------------------------------
# MathJax 3 from the sphinx-mathjax-offline package (the ``docs`` extra), copied
# into _static/mathjax: no page loads a script, font or stylesheet from another
# host.  docs/check_site.py verifies that on the built site (make docs runs it).
def _bundled_mathjax():
    from importlib.metadata import distribution

    static = Path(distribution("sphinx-mathjax-offline").locate_file("sphinx-mathjax-offline/static"))
    if not (static / "mathjax" / "tex-chtml.js").is_file():
        raise RuntimeError(f"no MathJax under {static}: pip install sphinx-mathjax-offline (the docs extra)")
    return static


html_static_path = [str(_bundled_mathjax()), str(DOCS / "_static")]
# linsep.css: wide result tables scroll inside their own box instead of wrapping their cells
html_css_files = ["linsep.css"]
mathjax_path = "mathjax/tex-chtml.js"

# -- autodoc / autosummary / numpydoc ---------------------------------------
autosummary_generate = True
autodoc_typehints = "none"
autodoc_member_order = "bysource"
add_module_names = False
# numpydoc renders the Parameters / Attributes / Methods sections; the class
# member tables would list every scikit-learn mixin method (get_params, ...).
numpydoc_show_class_members = False
numpydoc_show_inherited_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
# numpydoc validation of every documented object (-W makes a failure fatal):
# GL08 a docstring, PR01/PR02 every parameter documented and none unknown,
# RT01 a Returns section where the code returns a value (``fit`` included).
# Classes and functions of the public API are also held to See Also (SA01),
# Examples (EX01) and, for estimators, Attributes: see _validate_public_api.
numpydoc_validation_checks = {"GL08", "PR01", "PR02", "RT01"}
# Result records (frozen dataclasses built by linsep, never by the user)
# list their fields under Attributes, where a reader looks for them, not
# under Parameters; PR01 would ask for both.  _validate_public_api still
# requires their Attributes, See Also and Examples.
numpydoc_validation_exclude = {r"\.SeparabilityResult$", r"\.SolveResult$", r"\.BenchmarkReport$"}
PUBLIC_API_CHECKS = ("SA01", "EX01")

# -- sphinx-gallery ----------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": str(DOCS / "auto_examples"),
    "filename_pattern": r"/plot_",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "abort_on_example_error": True,
    "remove_config_comments": True,
    "plot_gallery": "True",
    "image_scrapers": ("matplotlib",),
    # Animations (FuncAnimation) are embedded as JavaScript HTML: the frames
    # are inline images, so the page stays offline.
    "matplotlib_animations": (True, "jshtml"),
    # "Examples using …" on the API pages: sphinx-gallery records which
    # examples use each linsep name; the class and function templates include
    # the resulting mini-gallery.
    "doc_module": ("linsep",),
    "backreferences_dir": str(DOCS / "api" / "backreferences"),
    "inspect_global_variables": True,
    "show_memory": False,
    "show_signature": False,
    "write_computation_times": False,
    # Only what an example prints is shown, not the repr of its last expression.
    "capture_repr": (),
    # No reference_url: linking the code blocks to external docs would fetch
    # their inventories at build time.
}

# -- HTML --------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"linsep {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_prev_next": False,
    "icon_links": [],
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_sidebars = {"index": [], "getting_started": []}
html_show_sourcelink = False

# Matplotlib's Agg backend in the gallery; its font cache message is not a warning.
warnings.filterwarnings("ignore", message="Matplotlib is currently using agg")

# -- generated API reference -------------------------------------------------
PUBLIC_MODULES = [
    ("linsep", "Estimators, registry, separability", "The names of ``linsep.__all__``."),
    ("linsep.inspection", "Inspection and plots", "Traces of the iterations and matplotlib displays."),
    ("linsep.datasets", "Data sets", "The nine bundled IDA benchmark data sets and their splits."),
    ("linsep.experiments", "Experiments", "The protocol of Lauer & Bloch (2006)."),
    ("linsep.kernels", "Kernels", None),
    ("linsep.warmup", "Compiling ahead of time", "``linsep warm-up``: numba's compiled loops, compiled once per machine."),
]
# What the constants of PUBLIC_MODULES' __all__ mean (one line each on the API page).
CONSTANTS = {
    "SEPARABLE": "Status of a fit that ended with every training sample strictly on its side.",
    "NOT_SEPARABLE": "Status of a fit that ended with a checked proof that no hyperplane separates the data.",
    "CONVERGED": "Status of a fit whose own stopping rule held, with no verdict on separability.",
    "MAX_ITER": "Status of a fit that spent ``max_iter`` before its stopping rule held (a ConvergenceWarning).",
    "BENCHMARKS": "The nine IDA data sets of Lauer & Bloch (2006): name -> :class:`BenchmarkInfo`.",
    "PAPER_METHODS": "The seven method columns of the paper's Table 1, in its order.",
    "PROTOCOLS": "The two protocols of the paper: ``\"validation\"`` (Table 1) and ``\"test\"`` (Table 3).",
    "TESTS": "The significance tests of :func:`summarize`: the paired t-test and Wilcoxon's signed-rank test.",
    "SCOPES": "What :func:`warm_up` compiles: ``\"all\"`` (every loop and kind of data) or ``\"bench\"`` "
              "(what ``linsep bench`` runs).",
}
SOLVER_MODULES = ["linsep.solvers.ho_kashyap", "linsep.solvers.mse", "linsep.solvers.perceptron",
                  "linsep.solvers.kozinec", "linsep.solvers.lsvm"]

# The public functions and classes of each solver family, documented at the family's public face (its
# package); the families' other functions are helpers of the estimators, not API, and get no page.
_SOLVER_API = {
    "linsep.solvers.ho_kashyap": ["ho_kashyap", "kernel_ho_kashyap", "EmpiricalKernelMap"],
    "linsep.solvers.mse": ["mse", "mse_linear_machine", "widrow_hoff", "lms"],
    "linsep.solvers.perceptron": ["perceptron", "batch_perceptron", "kernel_perceptron"],
    "linsep.solvers.kozinec": ["kozinec", "schlesinger_kozinec", "kernel_schlesinger_kozinec"],
    "linsep.solvers.lsvm": ["lagrangian_svm", "kernel_lagrangian_svm"],
}


def _solver_api():
    """``{family: [(name, "function" or "class")]}`` of :data:`_SOLVER_API`, for the module template."""
    import importlib

    api = {}
    for module, names in _SOLVER_API.items():
        family = importlib.import_module(module)
        api[module] = [(name, "class" if isinstance(getattr(family, name), type) else "function") for name in names]
    return api


autosummary_context = {"solver_api": _solver_api()}


def _public_names(module):
    import importlib
    import inspect

    mod = importlib.import_module(module)
    names = getattr(mod, "__all__", None)
    if names is None:
        names = [n for n, v in vars(mod).items()
                 if not n.startswith("_") and (inspect.isfunction(v) or inspect.isclass(v))
                 and getattr(v, "__module__", "") == module]
    return [n for n in names if not n.startswith("__")]


def _write_api_reference():
    """Write ``api/index.rst``: one autosummary table per public module (see PUBLIC_MODULES)."""
    import importlib

    lines = [".. Generated by docs/conf.py from the modules' __all__; do not edit.", "",
             "API reference", "=============", ""]
    for module, title, intro in PUBLIC_MODULES:
        try:
            mod = importlib.import_module(module)
        except ImportError:
            continue
        names = _public_names(module)
        lines += [title, "-" * len(title), ""]
        if module == "linsep":
            lines += [".. py:module:: linsep", ""]
        else:
            lines += [f".. automodule:: {module}", "   :no-members:", ""]
        lines += [f".. currentmodule:: {module}", ""]
        if intro:
            lines += [intro, ""]
        consts = [n for n in names if not callable(getattr(mod, n))]
        items = [n for n in names if n not in consts]
        lines += [".. autosummary::", "   :toctree: generated/", "   :nosignatures:", ""]
        lines += [f"   {n}" for n in items] + [""]
        for name in consts:
            if name == "__version__":
                continue
            value = getattr(mod, name)
            shown = repr(value) if len(repr(value)) <= 80 else f"{type(value).__name__} of {len(value)} entries"
            lines += [f".. py:data:: {name}", f"   :value: {shown}", "", f"   {CONSTANTS.get(name, 'A constant.')}", ""]
    title = "Solvers (pure functions)"
    lines += [title, "-" * len(title), "", ".. py:module:: linsep.solvers", "", ".. currentmodule:: linsep.solvers", "",
              "Each algorithm's numerical core; the module docstrings carry the equations.", "",
              ".. autosummary::", "   :toctree: generated/", ""]
    lines += [f"   {m.rpartition('.')[2]}" for m in SOLVER_MODULES] + [""]
    text = "\n".join(lines)
    path = DOCS / "api" / "index.rst"
    path.parent.mkdir(exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


_write_api_reference()

# Inherited scikit-learn methods are shown only where linsep relies on their
# behaviour as documented (predict / decision_function of primal models); the
# others (score, get_params, set_*_request, ...) are scikit-learn's, and their
# docstrings cross-reference scikit-learn's own site, which is not fetched.
_SKLEARN_METHODS_SHOWN = {"predict", "decision_function", "predict_proba"}


def _skip_foreign_members(app, what, name, obj, skip, options):
    if what != "class" or skip:
        return None
    module = getattr(obj, "__module__", None) or getattr(getattr(obj, "fget", None), "__module__", "")
    if module and not module.startswith("linsep") and name not in _SKLEARN_METHODS_SHOWN:
        return True
    return None


def _validate_public_api(app, what, name, obj, options, lines):
    """Warn (an error under -W) when a public class or function lacks See Also or Examples.

    numpydoc applies one set of checks to every object, methods included; a
    See Also and an Examples section per inherited ``predict`` would repeat
    the class's own, so these two are required of classes and functions only,
    and an Attributes section of every estimator (a class with ``fit``) and
    result record (a dataclass; its fields may be listed as Parameters).
    """
    if what not in ("class", "function") or not name.startswith("linsep."):
        return
    from numpydoc.validate import validate
    from sphinx.util import logging

    logger = logging.getLogger("linsep.docs")
    errors = [f"{code}: {message}" for code, message in validate(name)["errors"] if code in PUBLIC_API_CHECKS]
    if what == "class" and (hasattr(obj, "fit") or dataclasses.is_dataclass(obj)):
        from numpydoc.docscrape import ClassDoc

        doc = ClassDoc(obj, config={"show_class_members": False})
        if not (doc["Attributes"] or (dataclasses.is_dataclass(obj) and doc["Parameters"])):
            errors.append("AT01: an estimator or result record without an Attributes section")
    if errors:
        logger.warning("public API docstring of %r:\n  %s", name, "\n  ".join(errors))


# matplotlib's HTML animations (the gallery's jshtml) link Font Awesome from a
# CDN for their buttons; the theme already ships Font Awesome, whose classes
# draw the same icons, so the remote link is dropped from the generated pages.
_REMOTE_STYLESHEET = re.compile(r"""<link\s+rel=["']stylesheet["']\s+href=["']https?://[^"']*["']\s*/?>""")


def _drop_remote_stylesheets(app, docname, source):
    if docname.startswith("auto_examples/"):
        source[0] = _REMOTE_STYLESHEET.sub("", source[0])


def setup(app):
    app.connect("source-read", _drop_remote_stylesheets)
    app.connect("autodoc-skip-member", _skip_foreign_members)
    app.connect("autodoc-process-docstring", _validate_public_api)
