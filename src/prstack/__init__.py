"""prstack: are the changes of unmerged, stacked pull requests really in what you installed?"""

__version__ = "0.1.0"
