"""Verified, atomic downloads (exercised through file:// URLs) and the lookup order."""

import pytest

from svmrepro.data.files import OFFLINE_ENV, RemoteFile, sha256_of
from svmrepro.errors import DataError


@pytest.fixture
def upstream(tmp_path):
    path = tmp_path / "upstream" / "table.csv"
    path.parent.mkdir()
    path.write_bytes(b"1,2,3\n4,5,6\n")
    return path


def remote(upstream, sha256=None, shared_name=None):
    return RemoteFile("table.csv", upstream.as_uri(), sha256 or sha256_of(upstream), "demo", shared_name)


def test_download_lands_verified_in_the_data_home(isolated, upstream, monkeypatch):
    monkeypatch.delenv(OFFLINE_ENV)
    path = remote(upstream).fetch()
    assert path == isolated / "home" / "demo" / "table.csv"
    assert path.read_bytes() == upstream.read_bytes()


def test_a_download_with_the_wrong_hash_is_refused_and_leaves_nothing(isolated, upstream, monkeypatch):
    monkeypatch.delenv(OFFLINE_ENV)
    expected = "0" * 64
    with pytest.raises(DataError) as err:
        remote(upstream, sha256=expected).fetch()
    assert expected in str(err.value) and sha256_of(upstream) in str(err.value)
    assert not any((isolated / "home" / "demo").iterdir())  # no partial or wrong file cached


def test_offline_the_error_names_file_url_and_directory(isolated, upstream):
    with pytest.raises(DataError) as err:
        remote(upstream).fetch()
    message = str(err.value)
    assert "table.csv" in message and upstream.as_uri() in message and str(isolated / "home" / "demo") in message


def test_the_offline_copy_is_used_and_verified(isolated, upstream):
    shared = isolated / "shared" / "demo"
    shared.mkdir()
    (shared / "table.csv").write_bytes(upstream.read_bytes())
    assert remote(upstream, shared_name="demo/table.csv").fetch() == shared / "table.csv"
    (shared / "table.csv").write_bytes(b"tampered\n")
    with pytest.raises(DataError, match="checksum mismatch"):
        remote(upstream, shared_name="demo/table.csv").fetch()
