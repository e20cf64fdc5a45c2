"""What the claims tests share (imported by name: tests/ is on the path of its test modules)."""

#: the head of the toy claim the claims tests build on: b's fit CPU time against a's on toy/table1
TOY_CLAIM_HEAD = """\
claims:
  - id: faster
    source: Table 1
    claim: b trains faster than a
    paper_says: half the time
    output: toy/table1
"""
