"""The pre-registration lock of a paper's claims: ``experiments/<paper>/claims.lock.yaml``.

A claim is registered before our numbers are read; a change to it after that is an amendment, listed
in the claim with its commit, what changed, why, and the verdict before (:mod:`.schema`). The lock
holds, per claim, the commit that registered it (from git history when first locked, then kept, so a
shallow clone needs no history), how many amendments it had when locked, and a sha256 of what it
tests: its text, output, test, regions, timing flag, ``not_run``, and the experiment config of each
output it reads (:func:`output_configs`), each part hashed on its own too so that a mismatch says
what changed. A claim's ``today`` block (its reading against today's solver, added after the claim)
is registered on its own: its commit and a hash of its merged tests, ``unchanged`` reason and the
experiment configs of the outputs they read (:func:`today_part`), beside the claim's hash, which it
leaves as it was. ``tests/test_claims_lock.py`` fails when a claim differs from its lock entry; the lock
is written only by::

    python -m svmrepro.report.claims.relock [paper ...]

which adds new claims and new ``today`` blocks with their registering commit (an amendment that rewrote a
claim whole, its text, test, regions and output, registers it anew: :func:`rewritten_at`), and refuses to
re-lock a changed claim unless it has a new amendment whose ``changed`` names every part that changed, to
drop a locked claim, or to forget an amendment.
"""

from __future__ import annotations

import hashlib
import json
import math
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path

import yaml
from omegaconf import OmegaConf

from svmrepro.errors import ConfigError
from svmrepro.locations import config_dirs
from svmrepro.report.claims.blind import has_history, registration
from svmrepro.report.claims.primitives import outputs_read, primitive
from svmrepro.report.claims.schema import CHANGES, CLAIMS_FILE, Claim, Region, claims_path, load_claims, safe_load
from svmrepro.writing import write_file

LOCK_FILE = "claims.lock.yaml"
COMMAND = "python -m svmrepro.report.claims.relock"
#: the mode whose outputs are committed and judged
FULL_MODE = "full"
HEADER = f"""\
# The pre-registration lock of this paper's claims (claims.yaml), written by `{COMMAND}`, never by hand.
# Per claim: the commit that registered it, the amendments it had when locked, and a sha256 of what it
# tests (text, output, test, regions, timing, not_run and its outputs' experiment configs), per part too.
"""
#: the part of an entry that is registered on its own (:data:`.schema.CHANGES`' last word)
TODAY = "today"


@dataclass
class TodayEntry:
    registered: str
    hash: str


@dataclass
class LockEntry:
    registered: str
    amendments: int
    hash: str
    parts: dict[str, str]
    today: TodayEntry | None = None
    #: from git (:mod:`.blind`): the commit of the claim's current test, regions and output, the first commit
    #: of each runs CSV its test reads, and whether it was written before all of them (None: not known)
    defined: str | None = None
    data: dict[str, str] | None = None
    blind: bool | None = None

    def written(self) -> dict:
        """The entry as the lock file holds it (no key for a part it does not have)."""
        found = asdict(self)
        for key in (TODAY, "defined", "data", "blind"):
            if found[key] is None:
                del found[key]
        return found


def lock_path(paper: str) -> Path:
    return claims_path(paper).with_name(LOCK_FILE)


def _plain(value):
    """``value`` as JSON data with one spelling: infinite region ends as "inf"/"-inf"."""
    if isinstance(value, Region):
        return [_plain(value.low), _plain(value.high)]
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _digest(value) -> str:
    text = json.dumps(_plain(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def experiment_config(name: str) -> dict | None:
    """``conf/experiment/<name>.yaml`` parsed, with the experiment files its defaults include (by their
    names, under ``defaults``), the way the full sweep sees them: the page's presentation (``report``) is
    left out, save ``report.include``, which brings another experiment's runs into the output; so are
    the sweeps of other modes than ``full``, the ``smoke`` overrides and the ``confirm`` seeds, which decide no
    full-mode output (claims are judged on the full mode's, and again on the confirm mode's). None when no config folder has the file."""
    path = next((root / "experiment" / f"{name}.yaml" for root in config_dirs()
                 if (root / "experiment" / f"{name}.yaml").is_file()), None)
    if path is None:
        return None
    config = OmegaConf.to_container(OmegaConf.load(path)) or {}  # read as Hydra reads it
    report = config.pop("report", None) or {}
    config.pop("smoke", None)
    # the confirmatory phase's seeds decide the confirm runs, not the full mode's: their order against those
    # runs is checked from git (tests/test_confirm.py), so declaring them amends no claim
    config.pop("confirm", None)
    full = (config.pop("sweep", None) or {}).get(FULL_MODE)
    if full is not None:
        config["sweep"] = {FULL_MODE: full}
    if "include" in report:
        config["report"] = {"include": report["include"]}
    included = [entry.removeprefix("/experiment/") for entry in config.get("defaults") or []
                if isinstance(entry, str) and entry.startswith("/experiment/")]
    return {"file": config, "defaults": {name: experiment_config(name) for name in included}}


def output_configs(claim: Claim, test: dict | None = None) -> dict[str, dict | None]:
    """The experiment config of each output ``claim`` reads with ``test`` (its own test unless
    given; none for a claim we do not test)."""
    if claim.not_run is not None or not claim.output:
        return {}
    test = claim.test if test is None else test
    module = primitive(test.get("kind"), f"{claim.paper}: {claim.id}.test.kind")
    names = [name or claim.output for name in outputs_read(module, test)]
    return {name: experiment_config(name) for name in names}


def parts(claim: Claim) -> dict[str, object]:
    """What the lock hashes, under the words an amendment's ``changed`` uses (:data:`.schema.CHANGES`)
    but ``today``, which is hashed on its own (:func:`today_part`)."""
    return {"claim": claim.claim, "test": {"test": claim.test, "not_run": claim.not_run},
            "region": {"expect": claim.expect, "partly": claim.partly}, "output": claim.output,
            "output_config": output_configs(claim), "timing": claim.timing, "kind": claim.kind}


def today_part(claim: Claim) -> str | None:
    """The hash of the claim's ``today`` block (None without one): the claim's test with each
    reading's keys merged in, the ``unchanged`` reason, and the experiment configs they read."""
    if claim.today is None:
        return None
    tests = claim.today.tests(claim.test)
    configs = {name: output_configs(claim, test) for name, test in tests.items() if test is not None}
    return _digest({"tests": tests, "unchanged": claim.today.unchanged, "output_config": configs})


def fingerprint(claim: Claim) -> tuple[str, dict[str, str]]:
    """The claim's hash and a short hash of each part (``today`` aside)."""
    found = parts(claim)
    return _digest(found), {name: _digest(value)[:12] for name, value in found.items()}


def read_lock(paper: str) -> dict[str, LockEntry]:
    """The lock entries of ``paper``'s claims by id (none without a lock file)."""
    path = lock_path(paper)
    if not path.is_file():
        return {}
    entries = {}
    for claim_id, entry in ((safe_load(path.read_text()) or {}).get("claims") or {}).items():
        try:
            today = entry.pop(TODAY, None)
            entries[claim_id] = LockEntry(**entry, today=None if today is None else TodayEntry(**today))
        except TypeError as exc:  # a lock edited by hand
            raise ConfigError(f"{path}: {claim_id}: {exc}; rewrite the lock with `{COMMAND}`") from None
    return entries


def changed_parts(claim: Claim, entry: LockEntry) -> list[str]:
    """The parts of ``claim`` that differ from its lock entry (empty when it matches); a ``today``
    block not locked yet is no change but a registration (:func:`relock` adds it)."""
    digest, short = fingerprint(claim)
    changed = []
    if digest != entry.hash:
        # a part the lock predates (``kind``, issue 48) is registered by the next relock, not a change
        changed = [name for name in CHANGES if name in short and name in entry.parts
                   and short[name] != entry.parts[name]]
        if not changed and not set(short) - set(entry.parts):
            changed = ["the hash"]
    today = today_part(claim)
    if entry.today is not None and today != entry.today.hash:
        changed.append(TODAY)
    return changed


def lock_problems(paper: str) -> list[str]:
    """Why ``paper``'s claims do not match their lock, one line each (empty when they do)."""
    lock, claims = read_lock(paper), load_claims(paper)
    problems = []
    for claim in claims:
        entry = lock.get(claim.id)
        if entry is None:
            problems.append(f"{paper}: {claim.id} has no lock entry: commit it, then lock it with `{COMMAND}`")
        elif len(claim.amendments) < entry.amendments:
            problems.append(f"{paper}: {claim.id} has {len(claim.amendments)} amendments, the lock recorded "
                            f"{entry.amendments}: an amendment is never removed")
        elif changed := changed_parts(claim, entry):
            problems.append(f"{paper}: {claim.id} changed since it was locked ({', '.join(changed)}): add an "
                            f"amendment and re-lock with `{COMMAND} {paper}`")
        elif claim.today is not None and entry.today is None:
            problems.append(f"{paper}: {claim.id}'s today block has no lock entry: commit it, then lock it with "
                            f"`{COMMAND} {paper}`")
    problems += [f"{paper}: {claim_id} is locked but gone from {claims_path(paper).name}" for claim_id in lock
                 if claim_id not in {claim.id for claim in claims}]
    return problems


def registering_commit(paper: str, claim_id: str, part: str | None = None) -> str | None:
    """The first commit whose ``claims.yaml`` of ``paper`` has a claim ``claim_id`` (with a key
    ``part``, when given). Git's pickaxe finds the commits that change how often ``id: <id>`` (or
    ``<part>:``) occurs; a longer id holding it as a prefix is told apart by reading the file at each."""
    folder = claims_path(paper).parent
    found = subprocess.run(["git", "-C", str(folder), "log", "--reverse", "--format=%H", "-S",
                            f"{part}:" if part else f"id: {claim_id}", "--", CLAIMS_FILE],
                           capture_output=True, text=True, check=False)
    for commit in found.stdout.split() if found.returncode == 0 else []:
        shown = subprocess.run(["git", "-C", str(folder), "show", f"{commit}:./{CLAIMS_FILE}"], capture_output=True,
                               text=True, check=False)
        try:
            listed = (safe_load(shown.stdout) or {}).get("claims") or []
        except yaml.YAMLError:
            continue
        if shown.returncode == 0 and any(isinstance(c, dict) and c.get("id") == claim_id and (part is None or part in c)
                                         for c in listed):
            return commit
    return None


def _lock_today(paper: str, claim: Claim, entry: LockEntry, locked: TodayEntry | None) -> list[str]:
    """Put ``claim``'s today block into its new ``entry``: kept from the lock (``locked``; a change
    has passed :func:`relock`'s amendment check), or registered with the commit that added it; why not."""
    today = today_part(claim)
    if today is None:
        return [f"{claims_path(paper)}: {claim.id}: its today block is locked but gone: a registered block stays "
                "(say unchanged: <why> and add an amendment)"] if locked is not None else []
    if locked is None:
        commit = registering_commit(paper, claim.id, TODAY)
        if commit is None:
            return [f"{claims_path(paper)}: {claim.id}: no commit adds its today block yet: commit it, then lock it"]
        locked = TodayEntry(commit, today)
    entry.today = TodayEntry(locked.registered, today)
    return []


def relock(paper: str) -> tuple[dict[str, LockEntry], list[str]]:
    """``paper``'s new lock entries, and why some claim cannot be locked (nothing is written then)."""
    lock, claims = read_lock(paper), load_claims(paper)
    entries, refused = {}, []
    history = has_history()
    for claim in claims:
        digest, short = fingerprint(claim)
        entry = lock.get(claim.id)
        where = f"{claims_path(paper)}: {claim.id}"
        if entry is None:
            commit = registering_commit(paper, claim.id)
            if commit is None:
                refused.append(f"{where}: no commit adds it yet: commit the claim, then lock it")
                continue
            entries[claim.id] = LockEntry(commit, len(claim.amendments), digest, short)
            refused += _lock_today(paper, claim, entries[claim.id], None)
            continue
        new = claim.amendments[entry.amendments:]
        if len(claim.amendments) < entry.amendments:
            refused.append(f"{where}: {len(claim.amendments)} amendments, the lock recorded {entry.amendments}: "
                           "an amendment is never removed")
            continue
        changed = changed_parts(claim, entry)
        told = {word for amendment in new for word in amendment.changed}
        if changed and not new:
            refused.append(f"{where}: changed since it was locked ({', '.join(changed)}) without a new amendment: "
                           "add one (commit, date, changed, why, verdict_before) to its amendments")
            continue
        if untold := [word for word in changed if word not in told]:
            refused.append(f"{where}: its new amendments' changed ({', '.join(sorted(told))}) leave out "
                           f"{', '.join(untold)}, which changed")
            continue
        entries[claim.id] = LockEntry(rewritten_at(claim) or entry.registered, len(claim.amendments), digest, short)
        refused += _lock_today(paper, claim, entries[claim.id], entry.today)
    for claim in claims:
        if claim.id in entries:
            _lock_registration(claim, entries[claim.id], lock.get(claim.id), history)
    refused += [f"{claims_path(paper)}: {claim_id} is locked but gone: a registered claim stays (give it "
                "not_run: <why> and an amendment)" for claim_id in lock if claim_id not in entries
                and claim_id not in {claim.id for claim in claims}]
    return entries, refused


#: an amendment that changed all of these wrote a new claim under the old id: it registers the claim anew
REWRITE = {"claim", "test", "region", "output"}


def rewritten_at(claim: Claim) -> str | None:
    """The full commit of the claim's last amendment that rewrote it whole (:data:`REWRITE`): its
    registration from then on (None without one, or without the history to name it in full)."""
    rewrites = [a.commit for a in claim.amendments if REWRITE <= set(a.changed)]
    if not rewrites:
        return None
    found = subprocess.run(["git", "-C", str(claims_path(claim.paper).parent), "rev-parse", "--verify", "--quiet",
                            f"{rewrites[-1]}^{{commit}}"], capture_output=True, text=True, check=False)
    return found.stdout.strip() or None if found.returncode == 0 else None


def _lock_registration(claim: Claim, entry: LockEntry, locked: LockEntry | None, history: bool) -> None:
    """Put the claim's registration (:mod:`.blind`) into its new ``entry``: from git where the history is
    there, else kept from the lock (``locked``)."""
    found = registration(claim) if history and claim.not_run is None else None
    if found is not None:
        entry.defined, entry.data, entry.blind = found.defined, dict(found.data), found.blind
    elif locked is not None and claim.not_run is None:
        entry.defined, entry.data, entry.blind = locked.defined, locked.data, locked.blind


def write_lock(paper: str, entries: dict[str, LockEntry]) -> Path:
    path = lock_path(paper)
    body = yaml.safe_dump({"claims": {claim_id: entry.written() for claim_id, entry in entries.items()}},
                          sort_keys=False, width=120)
    return write_file(path, HEADER + body)
