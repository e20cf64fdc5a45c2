"""Sphinx configuration of svmrepro's documentation site (``make docs``; tests/test_docs.py).

The source folder is the checkout itself, so the committed results pages (``results/**/*.md``) are
pages of the site as they are, their links and figures unchanged; the pages written for the site are
under ``docs/``. ``make docs`` runs ``sphinx-build -W --keep-going -c docs . build/docs``: any warning
fails the build, a link to a page or file that does not exist among them.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "svmrepro"
author = "svmrepro contributors"
root_doc = "docs/index"

# autodoc and napoleon (Sphinx's own): the API page (docs/reference/api.md) is the estimators' numpydoc docstrings
extensions = ["myst_parser", "svmrepro_docs", "sphinx.ext.autodoc", "sphinx.ext.napoleon"]
napoleon_google_docstring = False
# attributes as a field list of their class, not objects of their own (scikit-learn's fitted names repeat), their
# trailing underscore kept (napoleon escapes it only with strip_signature_backslash)
napoleon_use_ivar = True
strip_signature_backslash = True
autodoc_member_order = "bysource"

# only the site's own pages and the generated results; results/quick/ (make reproduce, not committed), the
# tutorial's study folder (configuration files, included by path) and its results (make tutorial-results: the
# tutorial shows their figure; their pages link files of the study) are no pages
include_patterns = ["docs/**", "results/**"]
# results/confirm/ (the confirmatory phase's outputs) is read through the scoreboard's confirmed column and the
# forest plots; its pages stay files of the repository
exclude_patterns = ["results/quick/**", "results/confirm/**", "docs/tutorial/study/**", "docs/tutorial/results/**",
                    "docs/_root/**"]
source_suffix = {".md": "markdown"}

# heading anchors as GitHub makes them, so `page.md#a-heading` links work on the site as on GitHub;
# html_image: the scoreboard's <img> thumbnails are images whose files the build copies; deflist: term, then ": what it means"
myst_heading_anchors = 3
myst_enable_extensions = ["html_image", "deflist"]

html_theme = "alabaster"
html_title = "svmrepro"
# the sidebar beside the text from a 1240-px window up (a 1366-px laptop's browser has room), the text as wide as
# the page leaves it; docs/_static/custom.css keeps wide tables, figures and code inside it
html_theme_options = {"page_width": "1240px", "sidebar_width": "240px", "body_max_width": "none"}
html_static_path = ["_static"]
# /index.html sends a visitor to the site's first page (docs/index.html)
html_extra_path = ["_root"]
html_show_sourcelink = False
