"""Where search indexes live and how they are read: generations on disk, BM25 segments,
HNSW vectors, and discarding what cannot be read.
"""
