"""Claims as data: every claim of a paper, checked by code against the runs.

A paper's claims are ``experiments/<paper>/claims.yaml`` (:mod:`.schema`): each says, in our words,
what the paper claims, where (a table or figure), which output's runs test it, which statistic
(a primitive of :mod:`.primitives`: ``compare``, ``slope``, ``slope_difference``, ``threshold``,
``trend``) and, before any number of ours is read, the region of that statistic that supports the
claim (``expect``) and the one that supports it in part (``partly``), with the conditions ours
differ from the paper's in and any later amendments. :mod:`.lock` holds each claim's registration
and a hash of it, so an unrecorded change fails the tests. :mod:`.verdict` turns the statistic's 95 %
interval into a verdict; :mod:`.scoreboard` writes the verdicts of every paper into one page and
``claims.csv`` (:mod:`.scoreboard_csv`), and each output's claims into its page. A claim about time is
judged again against today's solver (:mod:`.today`), shown in both and on ``today.md`` (:mod:`.today_page`).
"""
