"""The papers' algorithms as scikit-learn estimators, one per module."""
