import pytest

from svmrepro.data.files import OFFLINE_ENV


@pytest.fixture
def offline(tmp_path, monkeypatch):
    """An empty data home and no downloads; the offline copies in shared/data stay visible."""
    home = tmp_path / "home"
    monkeypatch.setenv("SVMREPRO_DATA", str(home))
    monkeypatch.setenv(OFFLINE_ENV, "1")
    return home


@pytest.fixture
def isolated(offline, tmp_path, monkeypatch):
    """As ``offline``, with an empty shared/data too: nothing but what the test writes exists."""
    (tmp_path / "shared").mkdir()
    monkeypatch.setenv("SVMREPRO_SHARED_DATA", str(tmp_path / "shared"))
    return tmp_path
