"""The layer rule of ``docs/design.md``, read from the source: imports only go down, privacy holds at package borders.

Layers, lowest first (and no import cycle): ``_core`` (numerics), ``designs`` (where the data live),
``solvers``, ``estimators``, then persistence, inspection and the experiment,
then the command line.  ``kernels``, ``datasets`` and ``_version`` are leaves
anyone may import.  A module imports only from its own layer or below; a
package exposes what others use under a public name, so no ``_name`` is
imported from another package; at most two private entries sit at the top of
``linsep``; one module outside the designs asks which backend holds the data;
no estimator parks fit-time state on ``self`` to delete it afterwards; and no function
signature carries a private (underscore) parameter.
"""

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
LAYERS = {"linsep._core": 0, "linsep.kernels": 0, "linsep.datasets": 0, "linsep._version": 0,
          "linsep.designs": 1, "linsep.solvers": 2, "linsep.estimators": 3, "linsep.separability": 3,
          "linsep.persistence": 4, "linsep.inspection": 4, "linsep.experiments": 5, "linsep.warmup": 5,
          "linsep.cli": 6, "linsep.playground": 6, "linsep.__main__": 7, "linsep": 7}


def _modules():
    modules = {}
    for path in (SRC / "linsep").rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        package = parts[-1] == "__init__"
        modules[".".join(parts[:-1] if package else parts)] = (path, package)
    return modules


MODULES = _modules()


def _layer(module):
    best = max((prefix for prefix in LAYERS if module == prefix or module.startswith(prefix + ".")), key=len)
    return LAYERS[best]


def _imports():
    """``(importer, imported module, imported name)`` for every ``from linsep... import name`` in the source."""
    for module, (path, _) in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").startswith("linsep"):
                for alias in node.names:
                    target = f"{node.module}.{alias.name}"
                    yield module, target if target in MODULES else node.module, alias.name


def _package(module):
    return module if MODULES[module][1] else module.rpartition(".")[0]


def test_imports_only_go_down_the_layers():
    upward = [(importer, imported) for importer, imported, _ in _imports()
              if imported in MODULES and _layer(imported) > _layer(importer)
              and not (MODULES[importer][1] and imported.startswith(importer + "."))]
    assert upward == []


def test_no_import_cycle():
    """No module reaches itself through the imports of others (a package's own submodules excepted)."""
    edges = {}
    for importer, imported, _ in _imports():
        if imported in MODULES and imported != importer and not (
                MODULES[importer][1] and imported.startswith(importer + ".")):
            edges.setdefault(importer, set()).add(imported)
    cycles, state = [], {}

    def visit(module, path):
        state[module] = "open"
        for target in sorted(edges.get(module, ())):
            if state.get(target) == "open":
                cycles.append(path[path.index(target):] + [target])
            elif target not in state:
                visit(target, path + [target])
        state[module] = "done"

    for module in sorted(MODULES):
        if module not in state:
            visit(module, [module])
    assert cycles == []


def test_no_private_name_crosses_a_package_border():
    crossing = [(importer, imported, name) for importer, imported, name in _imports()
                if imported in MODULES and name.startswith("_") and not name.startswith("__")
                and f"{imported}.{name}" not in MODULES
                and _package(importer) != _package(imported)]
    assert crossing == []


def test_at_most_two_private_entries_at_the_top_of_the_package():
    private = sorted(p.name for p in (SRC / "linsep").iterdir()
                     if p.name.startswith("_") and p.name not in {"__init__.py", "__main__.py", "__pycache__"})
    assert private == ["_core", "_version.py"]


def test_one_module_outside_the_designs_asks_which_backend_holds_the_data():
    asking = sorted(module for module, (path, _) in MODULES.items() if not module.startswith("linsep.designs")
                    and re.search(r"\b(is_dask_collection|is_array_api_input|backend_of)\(", path.read_text()))
    assert asking == ["linsep.estimators.base"]


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("linsep.estimators")))
def test_fit_state_is_passed_not_parked_on_the_estimator(module):
    text = MODULES[module][0].read_text()
    assert not re.search(r"del self\._\w+|self\.__dict__\.pop\(\"_", text)


def test_no_test_module_imports_conftest_by_name():
    """``from conftest import`` resolves to whichever ``conftest`` loaded first (tests/playground has its own)."""
    tests = Path(__file__).resolve().parents[1]
    importing = sorted(str(p.relative_to(tests)) for p in tests.rglob("*.py")
                       if re.search(r"^\s*(from conftest import|import conftest)", p.read_text(), re.M))
    assert importing == []


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("linsep.estimators")
                                          and m != "linsep.estimators.base"))
def test_only_the_base_estimator_names_a_backend(module):
    """The family estimators declare what differs; where the data live (dask blocks, an array-API device) is the
    base's question and the designs' work (``designs/dask_fit.py``, ``designs/array_api_fit.py``)."""
    text = MODULES[module][0].read_text()
    assert not re.search(r"dask|array_api|array[ -]API", text, re.I), module


def test_fit_contexts_are_typed():
    """A fit's context declares its fields: no ``__dict__.update``, no ``getattr(fit, ...)`` probing."""
    for module in (m for m in MODULES if m.startswith("linsep.estimators")):
        text = MODULES[module][0].read_text()
        assert not re.search(r"(getattr|hasattr)\(fit\b|fit\.\w+\.pop\(0\)", text), module
    from linsep.estimators.base import FitContext

    with pytest.raises(TypeError):
        FitContext(folds=[])  # a field of the cross-validated estimators' CVFitContext, not of every fit
    with pytest.raises(AttributeError):
        FitContext().undeclared = 1


def test_no_function_signature_carries_a_private_parameter():
    """No test hook rides through a signature (issue 42): a path a caller chooses is a documented argument
    (``ho_kashyap(..., plan=HKPlan(...))``), one a test forces deep below it a ``linsep._core.plan.forced_plan``
    block; estimators keep private *attributes* (``_solver_plan``), which are no signature."""
    private = []
    for module, (path, _) in sorted(MODULES.items()):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                a = node.args
                names = [arg.arg for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if arg]
                private += [(module, node.lineno, getattr(node, "name", "<lambda>"), name)
                            for name in names if name.startswith("_")]
    assert private == []
