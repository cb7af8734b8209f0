"""The context builder: what an agent reads (wake, active memory, research evidence).

It packs facts, not files: a page becomes plain units of text (a claim as a sentence
with its date and source, prose sentences), bookkeeping (frontmatter, marker comments,
claim ids, Timeline and Evidence lists, replaced claims) never reaches the block, and a
budget is spent on distinct text only.

- `tokens`: the offline token estimate every budget uses;
- `plain`: markdown and bookkeeping out of one line; a line that repeats itself cut;
- `facts`: a page's text into `Unit`s, and a session transcript's summary line;
- `tables`: a markdown table's rows as facts about their first cell;
- `pack`: lines into bounded sections, de-duplicated across the whole block;
- `sections`: a page as a wake section (heading with title and path, then its facts);
- `evidence`: search results into ranked, compact evidence lines (active memory, research);
- `active`: the active-memory block from that evidence;
- `turns`: a chat kept one file per turn, a turn read with the turns said after it;
- `transcript`: a conversation kept in one page: names not matched, a turn with its reply;
- `asks`: the part of a long prompt that asks (searched first), and the rest;
- `terms`: a question's words as stems, weighted, as every module matches them;
- `when` and `recent`: the days a question names, and what was said and written in them.
"""

from .facts import Unit, page_units, session_summary
from .pack import Packer
from .plain import plain_line
from .tokens import estimate_tokens

__all__ = ["Unit", "page_units", "session_summary", "Packer", "plain_line", "estimate_tokens"]
