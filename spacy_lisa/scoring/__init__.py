"""SRL scoring with the CoNLL-2005 conventions: the scorer the ``lisa_srl`` component
registers (``spacy-lisa.srl_scorer.v1``, :mod:`.scorer`), its strict and official
(srl-eval.pl) conventions (:mod:`.strict`, :mod:`.official`) over shared counts
(:mod:`.counts`), parse and POS accuracy (:mod:`.syntax`), raw-text scoring by
characters (:mod:`.raw_text`, :mod:`.preset_sentences`), and what ``spacy-lisa evaluate``
builds around them: the gold-token docs (:mod:`.gold_docs`), the props files for
srl-eval.pl (:mod:`.props`) and the printed tables (:mod:`.tables`).

Nothing here imports the component (:mod:`spacy_lisa.pipeline`) or the pipeline loader:
the component's scorer lives here, and :mod:`spacy_lisa.evaluation` loads a pipeline and
runs these.
"""
