"""Ensembles of trained ``lisa_srl`` pipelines: the averaging model
(``spacy-lisa.Ensemble.v1``, :mod:`.model`) and the joining of pipelines into one whose
component runs it (``spacy-lisa ensemble``, :mod:`.join`)."""
