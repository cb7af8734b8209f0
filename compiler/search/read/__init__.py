"""The read side of search: the engine and the generation it holds, query parsing,
fusion, results and snippets.
"""
