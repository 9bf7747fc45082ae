"""Recall: the recaller, keyword calibration, fusion, reranking, the mirror and the embedders."""
