"""BIO role tags and their decoding, in plain numpy: no spaCy, and nothing of
``pipeline/``, ``models/`` or ``corpus/``, so all of them (and ``formats``) can use it.

- :mod:`.bio`: BIO tags <-> labelled spans (``spans_to_bio``, ``paths_to_spans``) and a
  label set's array views (``bio_labels``).
- :mod:`.viterbi`: the best BIO path of every frame of a batch (``viterbi_paths``, its
  loop compiled by numba; ``greedy_paths``) and the transition scores it reads
  (``estimate_transitions``).
- :mod:`.frames`: role logits -> frames (``decode_frames``), one span per numbered
  argument (``unique_core_roles``).
- :mod:`.tree`: head scores -> a single-rooted tree (``mst_decode``), solved by
  :mod:`.spanning_tree` (``maximum_spanning_tree``: Chu-Liu-Edmonds compiled by numba).
- :mod:`.scores`: the score arrays the decoders read: brought to the host, checked,
  floored, log-normalised.

Nothing is imported here: ``bio`` is read without numba loading.
"""
