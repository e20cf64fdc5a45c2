import errno
import gzip
import hashlib
import logging

import numpy as np
import pytest

from svmrepro.data import covtype
from svmrepro.data.base import array_sha256
from svmrepro.data.covtype import CLASS_COUNTS, CovType, load_table
from svmrepro.data.files import RemoteFile, data_home, sha256_of, shared_data_dir
from svmrepro.errors import ConfigError, DataError

REAL_SHARED = shared_data_dir()
needs_real = pytest.mark.skipif(
    REAL_SHARED is None or not (REAL_SHARED / "covtype" / "covtype.data.part05.gz").is_file(),
    reason="shared/data/covtype (the offline UCI covtype parts) is not present",
)


def covtype_text(n_per_class=12, seed=0):
    """A small table in covtype.data's format: 54 integer features, label 1..7 last."""
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.repeat(np.arange(1, 8), n_per_class))
    X = rng.integers(-173, 7174, size=(labels.size, 54))
    X[:, 20] = 0  # an all-zero soil-type column, as some are in the real file
    table = np.column_stack([X, labels]).astype(np.int32)
    return table, "".join(",".join(map(str, row)) + "\n" for row in table).encode()


def pin(monkeypatch, table, text):
    """Patch the checksums of the decompressed text and of the parsed table to the fixture's."""
    monkeypatch.setattr(covtype, "CONTENT_SHA256", hashlib.sha256(text).hexdigest())
    monkeypatch.setattr(covtype, "TABLE_SHA256", array_sha256({"table": table}))


@pytest.fixture
def fixture_gz(isolated, monkeypatch):
    """The small table as covtype.data.gz in the data home, with checksums patched to match it."""
    table, text = covtype_text()
    path = data_home() / "covtype" / "covtype.data.gz"
    path.parent.mkdir(parents=True)
    path.write_bytes(gzip.compress(text))
    monkeypatch.setattr(covtype, "CANONICAL", RemoteFile("covtype.data.gz", covtype.URL, sha256_of(path), "covtype"))
    pin(monkeypatch, table, text)
    return table


def write_parts(shared, text, monkeypatch, cut=300):
    """``text`` as two gzip parts in shared/data/covtype, with PARTS patched to them."""
    parts = []
    for i, chunk in enumerate((text[:cut], text[cut:])):
        path = shared / "covtype" / f"covtype.data.part0{i}.gz"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(gzip.compress(chunk))
        parts.append(RemoteFile(path.name, covtype.URL, sha256_of(path), "covtype", f"covtype/{path.name}"))
    monkeypatch.setattr(covtype, "PARTS", tuple(parts))
    return parts


def test_parses_the_upstream_format_and_caches_it(fixture_gz):
    np.testing.assert_array_equal(load_table(), fixture_gz)
    (cache,) = (data_home() / "covtype").glob("covtype-*.npy")
    assert covtype.CONTENT_SHA256[:16] in cache.name
    (data_home() / "covtype" / "covtype.data.gz").unlink()  # a cached table needs no source
    np.testing.assert_array_equal(load_table(), fixture_gz)


def test_rebuilds_from_the_shared_parts_when_the_gz_is_absent(isolated, monkeypatch):
    table, text = covtype_text()
    pin(monkeypatch, table, text)
    parts = write_parts(isolated / "shared", text, monkeypatch)
    assert covtype.source_files() == parts
    np.testing.assert_array_equal(load_table(), table)


def test_the_canonical_gz_wins_over_the_parts(fixture_gz, isolated, monkeypatch):
    _, text = covtype_text()
    write_parts(isolated / "shared", text, monkeypatch)
    assert covtype.source_files() == [covtype.CANONICAL]


def test_a_corrupt_part_is_refused_with_both_hashes(isolated, monkeypatch):
    _, text = covtype_text()
    parts = write_parts(isolated / "shared", text, monkeypatch)
    bad = isolated / "shared" / "covtype" / parts[1].name
    bad.write_bytes(gzip.compress(b"1,2,3\n"))
    with pytest.raises(DataError) as err:
        load_table()
    assert str(bad) in str(err.value)
    assert parts[1].sha256 in str(err.value) and sha256_of(bad) in str(err.value)


def test_a_wrong_canonical_gz_is_refused(isolated):
    path = data_home() / "covtype" / "covtype.data.gz"
    path.parent.mkdir(parents=True)
    path.write_bytes(gzip.compress(b"1,2\n"))
    with pytest.raises(DataError, match="checksum mismatch") as err:
        load_table()
    assert covtype.CANONICAL.sha256 in str(err.value) and sha256_of(path) in str(err.value)


def test_text_that_is_not_covtype_data_is_refused(fixture_gz, monkeypatch):
    monkeypatch.setattr(covtype, "CONTENT_SHA256", "0" * 64)
    with pytest.raises(DataError, match="covtype.data decompressed from covtype.data.gz: expected sha256 0{64}"):
        load_table()


def test_missing_data_names_file_url_and_directory(isolated):
    with pytest.raises(DataError) as err:
        CovType(problem="4_vs_5").load(0)
    message = str(err.value)
    assert "covtype.data.gz" in message and covtype.URL in message
    assert str(data_home() / "covtype") in message


def test_a_failed_cache_write_leaves_nothing_and_is_one_line(fixture_gz, monkeypatch):
    def broken_save(handle, array):
        handle.write(b"partial")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(np, "save", broken_save)
    with pytest.raises(DataError, match=r"^cannot write the covtype cache .*covtype-\w+\.npy: No space left on device$"):
        load_table()
    assert list((data_home() / "covtype").iterdir()) == [data_home() / "covtype" / "covtype.data.gz"]


def tamper(cache):
    """Edit the cached table in place, as a user or a bad disk might: every row changes."""
    table = np.load(cache)
    table[:, 0] += 1
    np.save(cache, table)


def the_cache():
    (cache,) = (data_home() / "covtype").glob("covtype-*.npy")
    return cache


def test_an_edited_cache_is_rebuilt_from_the_verified_source_with_one_warning(fixture_gz, caplog, monkeypatch):
    load_table()
    cache = the_cache()
    tamper(cache)
    with caplog.at_level(logging.WARNING, logger=covtype.__name__):
        np.testing.assert_array_equal(load_table(), fixture_gz)
    (warning,) = [record.getMessage() for record in caplog.records]
    assert str(cache) in warning and covtype.TABLE_SHA256 in warning and "\n" not in warning
    caplog.clear()
    monkeypatch.setattr(covtype, "parse", lambda files: pytest.fail("the rebuilt cache should have been used"))
    with caplog.at_level(logging.WARNING, logger=covtype.__name__):
        np.testing.assert_array_equal(load_table(), fixture_gz)
    assert not caplog.records


@pytest.mark.parametrize("content", [b"", b"\x93NUMPY garbage", b"not an npy file at all"])
def test_a_truncated_or_foreign_cache_is_rebuilt(fixture_gz, content):
    load_table()
    the_cache().write_bytes(content)
    np.testing.assert_array_equal(load_table(), fixture_gz)
    np.testing.assert_array_equal(np.load(the_cache()), fixture_gz)


def test_a_run_on_an_edited_cache_sees_the_verified_data(fixture_gz):
    source = CovType(problem="2_vs_rest", n_train=28, n_val=0, n_test=21, scale="none")
    honest = source.load(seed=1)
    tamper(the_cache())
    again = source.load(seed=1)
    np.testing.assert_array_equal(again.X_train, honest.X_train)
    np.testing.assert_array_equal(again.X_test, honest.X_test)
    assert again.fingerprint == honest.fingerprint


def test_an_edited_cache_without_its_source_fails_naming_the_source(fixture_gz):
    load_table()
    tamper(the_cache())
    (data_home() / "covtype" / "covtype.data.gz").unlink()
    with pytest.raises(DataError, match="data file covtype.data.gz is not available") as err:
        load_table()
    assert "\n" not in str(err.value)


def test_a_parse_that_is_not_the_pinned_table_is_refused_and_not_cached(fixture_gz, monkeypatch):
    monkeypatch.setattr(covtype, "TABLE_SHA256", "0" * 64)
    with pytest.raises(DataError, match="covtype table parsed from covtype.data.gz: expected sha256 0{64}, got "):
        load_table()
    assert not list((data_home() / "covtype").glob("covtype-*.npy"))


def test_splits_are_disjoint_stratified_and_seeded(fixture_gz):
    source = CovType(problem="2_vs_rest", n_train=28, n_val=14, n_test=21, scale="none")
    data = source.load(seed=3)
    rows = {tuple(row) for X in (data.X_train, data.X_val, data.X_test) for row in X}
    assert len(rows) == 28 + 14 + 21  # the fixture's rows are distinct, so the splits are disjoint
    assert sorted(np.unique(data.y_train)) == [-1, 1]
    assert (data.y_train == 1).sum() == 4 and (data.y_val == 1).sum() == 2  # class 2 is 1/7 of the rows
    position = {tuple(row[:-1]): i for i, row in enumerate(fixture_gz)}
    order = [position[tuple(row.astype(int))] for row in data.X_train]
    assert order != sorted(order)  # random order: a method may take the first rows as its own split
    again = source.load(seed=3)
    np.testing.assert_array_equal(again.X_train, data.X_train)
    np.testing.assert_array_equal(again.y_test, data.y_test)
    other = source.load(seed=4)
    assert not np.array_equal(other.X_train, data.X_train)


def test_train_max_divides_by_the_training_maximum(fixture_gz):
    data = CovType(problem="2_vs_rest", n_train=28, n_val=0, n_test=21).load(seed=0)
    top = np.abs(data.X_train).max(axis=0)
    np.testing.assert_allclose(np.delete(top, 20), 1.0)
    assert top[20] == 0 and np.all(np.isfinite(data.X_test))  # the all-zero column is left at 0
    assert data.X_val is None and data.y_val is None
    raw = CovType(problem="2_vs_rest", n_train=28, n_val=0, n_test=21, scale="none").load(seed=0)
    raw_top = np.abs(raw.X_train).max(axis=0)
    np.testing.assert_allclose(raw.X_test / np.where(raw_top == 0, 1, raw_top), data.X_test)


def test_pair_problems_keep_only_their_classes(fixture_gz):
    data = CovType(problem="6_vs_7", n_train=12, n_test=12).load(seed=0)
    labels = {tuple(row[:-1]): row[-1] for row in fixture_gz}
    for X, y in ((data.X_train, data.y_train), (data.X_test, data.y_test)):
        original = np.array([labels[tuple(row.astype(int))] for row in X])
        assert set(original) <= {6, 7}
        np.testing.assert_array_equal(y, np.where(original == 6, 1, -1))


def test_protocol_sizes_follow_the_papers():
    assert CovType().sizes() == (100_000, 10_000, 50_000) and CovType().scaling() == "train_max"
    assert CovType(problem="6_vs_7").sizes() == (8684 + 10255, 0, 8683 + 10255)
    assert CovType(problem="4_vs_5").sizes() == (1374 + 4747, 0, 1373 + 4746)
    assert CovType(problem="4_vs_5").scaling() == "none"
    assert CovType(n_train=50_000, n_val=0, n_test=58_100).sizes() == (50_000, 0, 58_100)


@pytest.mark.parametrize(
    ("params", "key"),
    [
        ({"problem": "3_vs_rest"}, "dataset.problem"),
        ({"scale": "standard"}, "dataset.scale"),
        ({"n_train": 1}, "dataset.n_train"),
        ({"n_val": -1}, "dataset.n_val"),
        ({"n_test": 0}, "dataset.n_test"),
        ({"problem": "4_vs_5", "n_train": 12_000}, "dataset.n_train"),
        ({"n_train": 500_000, "n_test": 90_000}, "dataset.n_train"),
    ],
)
def test_bad_parameters_name_the_key(params, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")) as err:
        CovType(**params)
    if key == "dataset.problem":
        assert "2_vs_rest, 6_vs_7, 4_vs_5" in str(err.value)


def test_fingerprint_follows_parameters_and_source(monkeypatch):
    base = CovType(problem="6_vs_7").fingerprint()
    assert CovType(problem="6_vs_7").fingerprint() == base
    assert CovType(problem="4_vs_5").fingerprint() != base
    monkeypatch.setattr(covtype, "CONTENT_SHA256", "f" * 64)
    assert CovType(problem="6_vs_7").fingerprint() != base


@pytest.fixture(scope="session")
def real_home(tmp_path_factory):
    """A data home holding the cache parsed once from the real shared parts."""
    home = tmp_path_factory.mktemp("covtype_home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SVMREPRO_DATA", str(home))
        patch.setenv("SVMREPRO_SHARED_DATA", str(REAL_SHARED))
        load_table()
    return home


@pytest.fixture
def real(real_home, monkeypatch):
    monkeypatch.setenv("SVMREPRO_DATA", str(real_home))
    monkeypatch.setenv("SVMREPRO_SHARED_DATA", str(REAL_SHARED))

    def no_parse(files):
        raise AssertionError("the cached table should have been used")

    monkeypatch.setattr(covtype, "parse", no_parse)


@needs_real
def test_real_table_has_the_uci_class_counts(real):
    table = load_table()
    assert table.shape == (581012, 55)
    labels, counts = np.unique(table[:, -1], return_counts=True)
    assert dict(zip(labels.tolist(), counts.tolist())) == CLASS_COUNTS
    assert table[0, :10].tolist() == [2596, 51, 3, 258, 0, 510, 221, 232, 148, 6279]


@needs_real
@pytest.mark.parametrize(
    ("problem", "train", "test"),
    [("6_vs_7", (8684, 10255), (8683, 10255)), ("4_vs_5", (1374, 4747), (1373, 4746))],
)
def test_real_cascade_problems_match_wen_and_lu_table_2(real, problem, train, test):
    data = CovType(problem=problem).load(seed=0)
    assert ((data.y_train == 1).sum(), (data.y_train == -1).sum()) == train
    assert ((data.y_test == 1).sum(), (data.y_test == -1).sum()) == test
    assert data.X_val is None and data.X_train.max() > 1000  # raw features


@needs_real
def test_real_mixture_problem(real):
    data = CovType().load(seed=0)
    assert (data.n_train, data.X_val.shape[0], data.n_test) == (100_000, 10_000, 50_000)
    assert data.X_train.shape[1] == 54 and np.abs(data.X_train).max() == 1.0
    share = 283301 / 581012  # class 2's share of the file, kept by stratification
    assert abs((data.y_train == 1).mean() - share) < 1e-4 and abs((data.y_test == 1).mean() - share) < 1e-4
