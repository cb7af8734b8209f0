"""One file's bytes into a `Document`: frontmatter, markdown-it with the wikilink rule and
Obsidian's syntax (`mdit` and its plugins), embeds, and the parse stage (`parse`).
"""
