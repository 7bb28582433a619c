__title__ = "spacy-lisa"
__version__ = "0.1.0"
