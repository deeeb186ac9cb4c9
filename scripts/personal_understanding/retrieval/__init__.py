"""Recall: tokenizer, lexicon, index, ranking, associations, time, traces."""
