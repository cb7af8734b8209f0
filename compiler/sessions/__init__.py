"""Sessions become memory: transcripts into turns, digests, proposals, compaction with
recovery, erasure from the claim log, and per-actor preferences.

    transcript.py  a session file into turns, each with its line range
    digest.py      extractive digest of a session or a day (decisions, facts, open
                   questions, follow-ups, each with its source turn)
    llm.py         the optional rewrite by an OpenAI-compatible endpoint (falls back)
    proposals.py   proposal files under inbox/proposed|applied|rejected/
    blobs.py       the content-addressed blob store of compacted originals (logs/blobs/)
    compact.py     compaction and uncompaction of old session transcripts
    erase.py       erasing claims' text from the claim log itself
    actors.py      an actor's own preferences for wake

Nothing here refreshes the site or indexes; the server's operations do (server/ops/).
"""
