import io
import zipfile

import numpy as np
import pandas as pd
import pytest

from svmrepro.data import kddcup98
from svmrepro.data.base import REGRESSION
from svmrepro.data.files import data_home, sha256_of, shared_data_dir
from svmrepro.data.kddcup98 import (
    CHARACTER_FIELDS, DROPPED_NUMERIC, KddCup98, draw_rows, read_learning_file, unit_scale,
)
from svmrepro.errors import ConfigError, DataError

#: cup98LRN.txt's 481 field names in file order (the header of the real 98-row sample)
HEADER = """
ODATEDW OSOURCE TCODE STATE ZIP MAILCODE PVASTATE DOB NOEXCH RECINHSE RECP3 RECPGVG RECSWEEP
MDMAUD DOMAIN CLUSTER AGE AGEFLAG HOMEOWNR CHILD03 CHILD07 CHILD12 CHILD18 NUMCHLD INCOME GENDER
WEALTH1 HIT MBCRAFT MBGARDEN MBBOOKS MBCOLECT MAGFAML MAGFEM MAGMALE PUBGARDN PUBCULIN PUBHLTH
PUBDOITY PUBNEWFN PUBPHOTO PUBOPP DATASRCE MALEMILI MALEVET VIETVETS WWIIVETS LOCALGOV STATEGOV
FEDGOV SOLP3 SOLIH MAJOR WEALTH2 GEOCODE COLLECT1 VETERANS BIBLE CATLG HOMEE PETS CDPLAY STEREO
PCOWNERS PHOTO CRAFTS FISHER GARDENIN BOATS WALKER KIDSTUFF CARDS PLATES LIFESRC PEPSTRFL POP901
POP902 POP903 POP90C1 POP90C2 POP90C3 POP90C4 POP90C5 ETH1 ETH2 ETH3 ETH4 ETH5 ETH6 ETH7 ETH8
ETH9 ETH10 ETH11 ETH12 ETH13 ETH14 ETH15 ETH16 AGE901 AGE902 AGE903 AGE904 AGE905 AGE906 AGE907
CHIL1 CHIL2 CHIL3 AGEC1 AGEC2 AGEC3 AGEC4 AGEC5 AGEC6 AGEC7 CHILC1 CHILC2 CHILC3 CHILC4 CHILC5
HHAGE1 HHAGE2 HHAGE3 HHN1 HHN2 HHN3 HHN4 HHN5 HHN6 MARR1 MARR2 MARR3 MARR4 HHP1 HHP2 DW1 DW2 DW3
DW4 DW5 DW6 DW7 DW8 DW9 HV1 HV2 HV3 HV4 HU1 HU2 HU3 HU4 HU5 HHD1 HHD2 HHD3 HHD4 HHD5 HHD6 HHD7
HHD8 HHD9 HHD10 HHD11 HHD12 ETHC1 ETHC2 ETHC3 ETHC4 ETHC5 ETHC6 HVP1 HVP2 HVP3 HVP4 HVP5 HVP6
HUR1 HUR2 RHP1 RHP2 RHP3 RHP4 HUPA1 HUPA2 HUPA3 HUPA4 HUPA5 HUPA6 HUPA7 RP1 RP2 RP3 RP4 MSA ADI
DMA IC1 IC2 IC3 IC4 IC5 IC6 IC7 IC8 IC9 IC10 IC11 IC12 IC13 IC14 IC15 IC16 IC17 IC18 IC19 IC20
IC21 IC22 IC23 HHAS1 HHAS2 HHAS3 HHAS4 MC1 MC2 MC3 TPE1 TPE2 TPE3 TPE4 TPE5 TPE6 TPE7 TPE8 TPE9
PEC1 PEC2 TPE10 TPE11 TPE12 TPE13 LFC1 LFC2 LFC3 LFC4 LFC5 LFC6 LFC7 LFC8 LFC9 LFC10 OCC1 OCC2
OCC3 OCC4 OCC5 OCC6 OCC7 OCC8 OCC9 OCC10 OCC11 OCC12 OCC13 EIC1 EIC2 EIC3 EIC4 EIC5 EIC6 EIC7
EIC8 EIC9 EIC10 EIC11 EIC12 EIC13 EIC14 EIC15 EIC16 OEDC1 OEDC2 OEDC3 OEDC4 OEDC5 OEDC6 OEDC7
EC1 EC2 EC3 EC4 EC5 EC6 EC7 EC8 SEC1 SEC2 SEC3 SEC4 SEC5 AFC1 AFC2 AFC3 AFC4 AFC5 AFC6 VC1 VC2
VC3 VC4 ANC1 ANC2 ANC3 ANC4 ANC5 ANC6 ANC7 ANC8 ANC9 ANC10 ANC11 ANC12 ANC13 ANC14 ANC15 POBC1
POBC2 LSC1 LSC2 LSC3 LSC4 VOC1 VOC2 VOC3 HC1 HC2 HC3 HC4 HC5 HC6 HC7 HC8 HC9 HC10 HC11 HC12 HC13
HC14 HC15 HC16 HC17 HC18 HC19 HC20 HC21 MHUC1 MHUC2 AC1 AC2 ADATE_2 ADATE_3 ADATE_4 ADATE_5
ADATE_6 ADATE_7 ADATE_8 ADATE_9 ADATE_10 ADATE_11 ADATE_12 ADATE_13 ADATE_14 ADATE_15 ADATE_16
ADATE_17 ADATE_18 ADATE_19 ADATE_20 ADATE_21 ADATE_22 ADATE_23 ADATE_24 RFA_2 RFA_3 RFA_4 RFA_5
RFA_6 RFA_7 RFA_8 RFA_9 RFA_10 RFA_11 RFA_12 RFA_13 RFA_14 RFA_15 RFA_16 RFA_17 RFA_18 RFA_19
RFA_20 RFA_21 RFA_22 RFA_23 RFA_24 CARDPROM MAXADATE NUMPROM CARDPM12 NUMPRM12 RDATE_3 RDATE_4
RDATE_5 RDATE_6 RDATE_7 RDATE_8 RDATE_9 RDATE_10 RDATE_11 RDATE_12 RDATE_13 RDATE_14 RDATE_15
RDATE_16 RDATE_17 RDATE_18 RDATE_19 RDATE_20 RDATE_21 RDATE_22 RDATE_23 RDATE_24 RAMNT_3 RAMNT_4
RAMNT_5 RAMNT_6 RAMNT_7 RAMNT_8 RAMNT_9 RAMNT_10 RAMNT_11 RAMNT_12 RAMNT_13 RAMNT_14 RAMNT_15
RAMNT_16 RAMNT_17 RAMNT_18 RAMNT_19 RAMNT_20 RAMNT_21 RAMNT_22 RAMNT_23 RAMNT_24 RAMNTALL
NGIFTALL CARDGIFT MINRAMNT MINRDATE MAXRAMNT MAXRDATE LASTGIFT LASTDATE FISTDATE NEXTDATE
TIMELAG AVGGIFT CONTROLN TARGET_B TARGET_D HPHONE_D RFA_2R RFA_2F RFA_2A MDMAUD_R MDMAUD_F
MDMAUD_A CLUSTER2 GEOCODE2
""".split()
FEATURES = [f for f in HEADER if f not in CHARACTER_FIELDS + DROPPED_NUMERIC + ("TARGET_D",)]
SAMPLE = None if shared_data_dir() is None else shared_data_dir() / "kdd98" / "cup98LRN_first98rows_snip.csv"


def learning_file(n_rows=40, seed=0):
    """(text, X, y): cup98LRN.txt-format text and the feature matrix and TARGET_D it holds (NaN = missing).

    Character fields hold letter codes (ZIP with UCI's trailing "-", blank when missing); a missing
    number is written as "." (the documentation's coding) or as an empty field; lines end in CRLF.
    """
    rng = np.random.default_rng(seed)
    numbers = rng.integers(0, 9999, size=(n_rows, len(HEADER))).astype(float)
    numbers[rng.random(numbers.shape) < 0.1] = np.nan
    numbers[:, HEADER.index("TARGET_D")] = rng.integers(0, 50, size=n_rows)
    codes = np.array(["IL", "46150-", "L4E", "X", " ", "S4E"])
    lines = [",".join(HEADER)]
    for i in range(n_rows):
        cells = []
        for j, field in enumerate(HEADER):
            if field in CHARACTER_FIELDS:
                cells.append(str(rng.choice(codes)))
            elif np.isnan(numbers[i, j]):
                cells.append(rng.choice(["", "."]))
            else:
                cells.append(f"{numbers[i, j]:g}")
        lines.append(",".join(cells))
    columns = [HEADER.index(f) for f in FEATURES]
    return "\r\n".join(lines) + "\r\n", numbers[:, columns], numbers[:, HEADER.index("TARGET_D")]


def write_zip(path, text, member=kddcup98.MEMBER):
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(member, text)
    return path


@pytest.fixture
def fixture_zip(isolated):
    """(KddCup98 kwargs pinning the fixture zip, X, y) with cup98lrn.zip in the data home."""
    text, X, y = learning_file()
    path = write_zip(data_home() / "kddcup98" / "cup98lrn.zip", text)
    return {"sha256": sha256_of(path)}, X, y


def test_the_real_names_leave_400_features():
    assert len(HEADER) == 481 and len(set(CHARACTER_FIELDS)) == 75 and set(CHARACTER_FIELDS) <= set(HEADER)
    assert len(FEATURES) == 400 and FEATURES[:3] == ["AGE", "NUMCHLD", "INCOME"]


def test_parses_the_upstream_format(fixture_zip):
    _, X, y = fixture_zip
    X_read, y_read = read_learning_file(data_home() / "kddcup98" / "cup98lrn.zip")
    np.testing.assert_array_equal(X_read, X)  # NaN where missing, in file order
    np.testing.assert_array_equal(y_read, y)


def test_load_scales_to_the_unit_interval(fixture_zip):
    kwargs, X, y = fixture_zip
    data = KddCup98(n_train=10, n_test=20, subset="initial", **kwargs).load(seed=0)
    assert data.task == REGRESSION and data.X_train.shape == (10, 400) and data.X_test.shape == (20, 400)
    np.testing.assert_allclose(data.X_train, unit_scale(X)[:10])  # initial = the file's first rows
    np.testing.assert_allclose(data.y_train, (y[:10] - y.min()) / (y.max() - y.min()))
    both = np.vstack([data.X_train, data.X_test])
    assert both.min() >= 0 and both.max() <= 1
    first50 = KddCup98(n_train=10, n_test=20, subset="initial", features="first50", **kwargs).load(seed=0)
    np.testing.assert_array_equal(first50.X_train, data.X_train[:, :50])


def test_unit_scale_reads_missing_as_zero_and_keeps_constants_at_zero():
    values = np.array([[5.0, 3.0], [10.0, 3.0], [np.nan, 3.0]])
    np.testing.assert_allclose(unit_scale(values), [[0.5, 0], [1, 0], [0, 0]])
    np.testing.assert_allclose(unit_scale(np.array([2.0, 4.0, 3.0])), [0, 1, 0.5])


def test_random_subsets_are_seeded(fixture_zip):
    source = KddCup98(n_train=10, n_test=20, **fixture_zip[0])
    data, again, other = source.load(seed=1), source.load(seed=1), source.load(seed=2)
    np.testing.assert_array_equal(data.X_train, again.X_train)
    np.testing.assert_array_equal(data.y_test, again.y_test)
    assert not np.array_equal(data.X_train, other.X_train)


@pytest.mark.parametrize("initial", [False, True])
def test_draw_rows_is_disjoint(initial):
    train, test = draw_rows(50, 20, 30, np.random.default_rng(0), initial=initial)
    assert len(set(train) | set(test)) == 50
    assert (list(train) == list(range(20))) is initial
    with pytest.raises(ConfigError, match="cannot draw"):
        draw_rows(50, 20, 31, np.random.default_rng(0))


def test_a_file_too_short_for_the_request(fixture_zip):
    with pytest.raises(ConfigError, match="cannot draw n_train \\+ n_test = 50 rows from 40"):
        KddCup98(n_train=30, n_test=20, **fixture_zip[0]).load(seed=0)


def test_a_zip_with_another_checksum_is_refused(fixture_zip):
    with pytest.raises(DataError, match="checksum mismatch") as err:
        KddCup98().load(seed=0)
    assert kddcup98.REPORTED_ZIP_SHA256 in str(err.value) and fixture_zip[0]["sha256"] in str(err.value)


def test_missing_file_names_file_url_and_directory(isolated):
    with pytest.raises(DataError) as err:
        KddCup98().load(seed=0)
    message = str(err.value)
    assert "cup98lrn.zip" in message and kddcup98.URL in message and str(data_home() / "kddcup98") in message


@pytest.mark.parametrize(
    ("line", "field", "value", "match"),
    [
        (0, "CONTROLN", "ID", "found 401 features"),  # a renamed dropped field is one feature too many
        (0, "TARGET_D", "TARGETD", "expected TARGET_D"),
        (3, "AGE", "4O", "could not convert"),
    ],
)
def test_a_file_of_another_layout_is_refused(isolated, line, field, value, match):
    lines = [text.split(",") for text in learning_file()[0].split("\r\n")]
    lines[line][HEADER.index(field)] = value
    path = write_zip(isolated / "cup98lrn.zip", "\r\n".join(",".join(cells) for cells in lines))
    with pytest.raises(DataError, match=match):
        read_learning_file(path)


def test_a_zip_without_the_learning_file_is_refused(isolated):
    path = write_zip(isolated / "cup98lrn.zip", learning_file()[0], member="other.txt")
    with pytest.raises(DataError, match="cup98LRN.txt"):
        read_learning_file(path)


@pytest.mark.parametrize(
    ("params", "key"),
    [
        ({"features": "first100"}, "dataset.features"),
        ({"subset": "last"}, "dataset.subset"),
        ({"sha256": "ABC"}, "dataset.sha256"),
        ({"n_train": 1}, "dataset.n_train"),
        ({"n_test": 0}, "dataset.n_test"),
        ({"n_train": 95_000, "n_test": 1000}, "dataset.n_train"),
    ],
)
def test_bad_parameters_name_the_key(params, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        KddCup98(**params)


def test_fingerprint_records_the_accepted_file():
    assert KddCup98().source_checksums() == {"cup98lrn.zip": kddcup98.REPORTED_ZIP_SHA256}
    assert KddCup98(sha256="a" * 64).fingerprint() != KddCup98().fingerprint()


@pytest.mark.skipif(SAMPLE is None or not SAMPLE.is_file(), reason="shared/data/kdd98 sample is not present")
def test_the_real_first_98_rows(isolated):
    sample = pd.read_csv(SAMPLE, sep=";", dtype=str, keep_default_na=False)
    sample.columns = [name.strip() for name in sample.columns]
    sample = sample.apply(lambda column: column.str.strip())
    assert list(sample.columns) == HEADER
    numeric = sample.apply(lambda column: pd.to_numeric(column.replace("", None), errors="coerce"))
    text_fields = {f for f in HEADER if (numeric[f].isna() & (sample[f] != "")).any()}
    assert text_fields <= set(CHARACTER_FIELDS)  # every field holding text is a character field
    buffer = io.StringIO()
    sample.to_csv(buffer, index=False, lineterminator="\r\n")  # back to the upstream comma format
    X, y = read_learning_file(write_zip(isolated / "cup98lrn.zip", buffer.getvalue()))
    assert X.shape == (98, 400)
    np.testing.assert_array_equal(y, numeric["TARGET_D"].to_numpy())
    assert (y > 0).sum() == (numeric["TARGET_B"] == 1).sum() == 5
