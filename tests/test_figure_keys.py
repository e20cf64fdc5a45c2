"""A figure is drawn again exactly when what it shows may have changed: the same table, spec and code leave
its PNG as it is; another value, another spec, other code, a PNG without the key or a link in its place are
drawn."""

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from svmrepro.report import figure_keys
from svmrepro.report import figures
from svmrepro.report.figure_keys import KEY, figure_key, is_current
from svmrepro.report.figures import plot
from svmrepro.report.spec import spec_from_config
from svmrepro.report.tables import summarise
from svmrepro.writing import SymlinkInTheWay

RUNS = pd.DataFrame([{"params.x": str(x), "tags.algorithm": g, "params.seed": str(s),
                      "metrics.test_error": 0.1 * x + 0.01 * s + (g == "b")}
                     for g in ("a", "b") for x in (1, 2, 4) for s in (0, 1)])
ROOT = Path(__file__).resolve().parents[1]
SPEC = spec_from_config("p/f", {"title": "t", "x": "params.x", "metrics": ["test_error"]})


@pytest.fixture
def draws(monkeypatch):
    """The figures actually drawn (saved), by path."""
    drawn = []
    save = figures.save_figure

    def counting(fig, title, path, key=None):
        drawn.append(path.name)
        save(fig, title, path, key)

    monkeypatch.setattr(figures, "save_figure", counting)
    return drawn


def test_the_same_table_spec_and_code_leave_the_figure_as_it_is(tmp_path, draws):
    path = tmp_path / "f.png"
    plot(summarise(RUNS, SPEC), None, SPEC, path)
    first, stat = path.read_bytes(), path.stat()
    plot(summarise(RUNS, SPEC), None, SPEC, path)
    assert draws == ["f.png"]
    assert path.read_bytes() == first and path.stat().st_mtime_ns == stat.st_mtime_ns


def test_a_figure_says_which_drawing_libraries_drew_it(tmp_path):
    import matplotlib
    import PIL

    path = tmp_path / "f.png"
    assert figure_keys.drawn_with(path) is None
    plot(summarise(RUNS, SPEC), None, SPEC, path)
    assert figure_keys.drawn_with(path) == f"matplotlib {matplotlib.__version__} pillow {PIL.__version__}"
    path.write_bytes(b"not an image")
    assert figure_keys.drawn_with(path) is None


def test_another_value_or_spec_draws_it_again(tmp_path, draws):
    path = tmp_path / "f.png"
    plot(summarise(RUNS, SPEC), None, SPEC, path)
    first = path.read_bytes()
    changed = RUNS.assign(**{"metrics.test_error": RUNS["metrics.test_error"].where(RUNS.index != 3, 0.75)})
    plot(summarise(changed, SPEC), None, SPEC, path)
    assert draws == ["f.png", "f.png"] and path.read_bytes() != first
    retitled = spec_from_config("p/f", {"title": "another title", "x": "params.x", "metrics": ["test_error"]})
    plot(summarise(changed, retitled), None, retitled, path)
    assert len(draws) == 3


def test_a_png_without_the_key_or_a_link_in_its_place_is_drawn(tmp_path, draws):
    path = tmp_path / "f.png"
    plot(summarise(RUNS, SPEC), None, SPEC, path)
    key = figure_key("output", summarise(RUNS, SPEC), None, SPEC, ())
    outside = tmp_path / "outside.png"
    outside.write_bytes(path.read_bytes())  # the very figure, keyed, but reached through a link
    path.unlink()
    path.symlink_to(outside)
    assert not is_current(path, key)  # never taken for the figure: drawn, and the link refused, not written through
    kept = outside.read_bytes()
    with pytest.raises(SymlinkInTheWay):
        plot(summarise(RUNS, SPEC), None, SPEC, path)
    assert len(draws) == 2 and outside.read_bytes() == kept
    path.unlink()
    path.write_bytes(b"\x89PNG\r\n\x1a\n not a whole image")
    assert not is_current(path, key)
    plot(summarise(RUNS, SPEC), None, SPEC, path)
    assert len(draws) == 3 and is_current(path, key) and path.read_bytes() == kept  # drawn again, the same bytes


def test_the_key_changes_with_any_module_that_draws_and_with_every_value(tmp_path, monkeypatch):
    package = tmp_path / "svmrepro"
    (package / "report").mkdir(parents=True)
    (package / "report" / "anything.py").write_text("A = 1\n")
    monkeypatch.setattr(figure_keys, "PACKAGE_DIR", package)
    figure_keys._drawing_code.cache_clear()
    try:
        before = figure_key("output", RUNS)
        (package / "report" / "anything.py").write_text("A = 2\n")
        figure_keys._drawing_code.cache_clear()
        assert figure_key("output", RUNS) != before
        changed = figure_key("output", RUNS)
        (package / "runner.py").write_text("B = 1\n")  # reaches a figure only through the numbers it makes
        figure_keys._drawing_code.cache_clear()
        assert figure_key("output", RUNS) == changed
    finally:
        figure_keys._drawing_code.cache_clear()
    # a value deep inside a long array or a sidecar's nested points counts, not only what repr() shows
    long = {"run": {"X": list(range(5000)), "y": [1] * 5000}}
    changed = {"run": {"X": list(range(5000)), "y": [1] * 2500 + [-1] + [1] * 2499}}
    assert figure_key("scatter", long) != figure_key("scatter", changed)
    import numpy as np

    array = np.zeros(100_000)
    other = array.copy()
    other[50_000] = 1e-12
    assert figure_key(array) != figure_key(other)
    assert figure_key(array) == figure_key(array.copy())


@dataclasses.dataclass
class Holder:
    values: object
    names: frozenset = frozenset()


def test_the_key_reads_a_dataclass_field_by_field_and_is_the_same_in_every_process():
    import numpy as np

    long = np.zeros(5000)
    other = long.copy()
    other[2500] = 1.0  # repr() would elide it
    assert figure_key(Holder(long)) != figure_key(Holder(other))
    # a set of words is in hash order, which differs between processes: the key must not be
    code = ("import dataclasses; from svmrepro.report.figure_keys import figure_key\n"
            "@dataclasses.dataclass\nclass Holder:\n    values: object\n    names: frozenset = frozenset()\n"
            "print(figure_key(Holder([1, 2], frozenset({'alpha', 'beta', 'gamma', 'delta'}))))")
    keys = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT,
                           env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout for seed in (1, 2, 3)}
    assert len(keys) == 1 and len(keys.pop().strip()) == 64


def test_a_keyed_png_names_its_key_in_a_text_chunk(tmp_path):
    from PIL import Image

    path = tmp_path / "f.png"
    plot(summarise(RUNS, SPEC), None, SPEC, path)
    with Image.open(path) as image:
        assert len(image.info[KEY]) == 64 and os.path.getsize(path) > 1000


def test_floats_that_differ_in_their_last_bits_as_between_two_cpus_give_one_key_and_a_visible_difference_another():
    """The same runs give floats that differ in their last bits on another CPU (numpy's and OpenBLAS's AVX2 and
    AVX-512 kernels round differently): a committed figure drawn on one machine is current on the other. A
    difference a figure could show (a relative 1e-6) still draws it again."""
    import numpy as np

    values = np.array([1.0247205910013664, -0.5517042665363825, 2.5998666627686218e-5, 0.0, np.inf, np.nan])
    other_cpu = np.nextafter(np.nextafter(values, np.inf), np.inf)  # two units in the last place up, as seen
    visible = values * (1 + 1e-6)
    table = RUNS.assign(**{"metrics.test_error": np.nextafter(RUNS["metrics.test_error"], np.inf)})
    nested = {"rows": [(float(values[0]), {"low": float(values[1])})], "value": np.float64(values[2])}
    nested_other = {"rows": [(float(other_cpu[0]), {"low": float(other_cpu[1])})], "value": np.float64(other_cpu[2])}
    assert figure_key(values) == figure_key(other_cpu) != figure_key(visible)
    assert figure_key(pd.Series(values)) == figure_key(pd.Series(other_cpu)) != figure_key(pd.Series(visible))
    assert figure_key(RUNS) == figure_key(table) != figure_key(RUNS.assign(**{"metrics.test_error": 1.0}))
    assert figure_key(nested) == figure_key(nested_other)
    assert figure_key(Holder(float(values[0]))) == figure_key(Holder(float(other_cpu[0])))
    assert figure_key(Holder(float(values[0]))) != figure_key(Holder(float(visible[0])))
    assert figure_key(float(values[1])) == figure_key(float(other_cpu[1])) != figure_key(float(visible[1]))
    assert figure_key(values.astype(np.float32)) != figure_key(values)  # the dtype is part of what is drawn
