"""An agent's week of memory: people, projects, decisions, sessions, replaced and forgotten
facts, written the way an agent writes them (through `/v1/memory-write` and
`/v1/session-ingest`), with questions that know what the answer must and must not hold.

    base = files(seed)                  # the pages a person wrote before the week
    calls = writes(seed)                # the week's API calls, in order
    questions = questions(seed)         # prompt, gold paths, answer words, forbidden text

Each question has `relevant` (paths whose text answers it), `answer` (words all of which
a good block holds) and `forbidden` (text that must not appear: a replaced state, a
forgotten fact). A session that moves a project's job to a new time updates the durable
page without replacing a claim: the answer is the new time, the old one may stand beside
it. Filler notes share the questions' words (lunch, updates, job, database) so the search
has something to get wrong. Deterministic for a seed.
"""

from __future__ import annotations

import random
from typing import Any

FIRST = ["Mira", "Tobias", "Keiko", "Anders", "Lucia", "Dev", "Rosa", "Idris", "Petra", "Hugo", "Selin", "Nikhil",
         "Freya", "Otto", "Amara", "Jonas"]
LAST = ["Okafor", "Lindqvist", "Tanaka", "Moreau", "Castillo", "Brennan", "Haddad", "Novak", "Ferreira", "Kowalski",
        "Achterberg", "Salo"]
TEAMS = ["billing", "payments", "platform", "growth", "support", "data"]
ALLERGIES = ["peanuts", "shellfish", "gluten", "sesame", "dairy", "kiwi"]
PREFS = [("async updates, a short Friday summary", "async Friday summary"),
         ("a phone call rather than long emails", "phone call"),
         ("bullet points with the numbers first", "bullet numbers"),
         ("a written agenda a day before any meeting", "written agenda"),
         ("updates in the team channel, never direct messages", "team channel")]
OFFICES = ["Lisbon", "Toronto", "Nairobi", "Osaka", "Tallinn", "Denver", "Porto", "Leeds"]
PROJECTS = ["Ledgerline", "Harborview", "Quillstone", "Nimbusgate", "Copperfield", "Tidewell", "Brightmoor"]
DATABASES = ["Postgres", "ClickHouse", "SQLite", "DuckDB", "CockroachDB"]
TIMES = ["01:00", "02:00", "02:30", "04:15", "05:45"]
NEW_TIMES = ["03:30", "06:10", "00:45", "07:20"]
SECRETS = ["a surprise move to Rome", "an interview at a rival firm", "a second passport application",
           "a planned sabbatical in Chile"]
FILLER = [
    "The {team} team discussed lunch options and the catering budget for the offsite.",
    "Friday updates for the {team} team go out after the planning meeting.",
    "The {proj} dashboard job runs every hour and reports to the on-call channel.",
    "We compared databases for the reporting warehouse; nothing was decided.",
    "Reminder: order lunch for the {team} review early, the kitchen closes at noon.",
    "The nightly backup job for the wiki server runs at {time} UTC.",
    "Notes from the {team} retro: fewer meetings, clearer owners.",
    "A vendor pitched a new database for the {proj} analytics, we will look later.",
    "Travel policy: book flights to the {office} office two weeks ahead.",
    "Update on hiring: the {team} team opens two roles next quarter.",
]


def _people(rng: random.Random, n: int) -> list[dict[str, Any]]:
    firsts = rng.sample(FIRST, n)
    out = []
    for i, first in enumerate(firsts):
        last = rng.choice(LAST)
        offices = rng.sample(OFFICES, 2)
        out.append({"first": first, "name": f"{first} {last}", "slug": f"{first.lower()}-{last.lower()}",
                    "team": TEAMS[i % len(TEAMS)], "allergy": rng.choice(ALLERGIES), "pref": rng.choice(PREFS),
                    "office": offices[0], "new_office": offices[1] if i % 2 == 0 else None,
                    "secret": SECRETS[i % len(SECRETS)] if i % 3 == 0 else None})
    return out


def _projects(rng: random.Random, n: int, people: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for i, name in enumerate(rng.sample(PROJECTS, n)):
        out.append({"name": name, "slug": name.lower(), "owner": people[i % len(people)],
                    "db": rng.choice(DATABASES), "time": rng.choice(TIMES),
                    "new_time": NEW_TIMES[i % len(NEW_TIMES)] if i % 2 == 0 else None})
    return out


def plan(seed: int, people: int = 8, projects: int = 4, filler: int = 160) -> dict[str, Any]:
    rng = random.Random(seed)
    ppl = _people(rng, people)
    prj = _projects(rng, projects, ppl)
    files: dict[str, str] = {
        "core/identity.md": "---\ntitle: Identity\ntype: core\npinned: true\n---\n# Identity\n\n"
                            "This memory belongs to an engineering manager's assistant. It keeps people, projects "
                            "and decisions.\n",
        "core/working-agreements.md": "---\ntitle: Working agreements\ntype: core\npinned: true\n---\n"
                                      "# Working agreements\n\n- Decisions go in `decisions/`.\n"
                                      "- Ask before sharing anything about a person outside the team.\n",
    }
    for p in ppl:
        files[f"people/{p['slug']}.md"] = (f"---\ntitle: {p['name']}\naliases: [{p['first']}]\ntype: person\n---\n"
                                           f"# {p['name']}\n\n{p['first']} works on the {p['team']} team.\n")
    for j in prj:
        o = j["owner"]
        files[f"projects/{j['slug']}/state.md"] = (
            f"---\ntitle: {j['name']}\ntype: project\nupdated: 2026-11-16\n---\n# {j['name']}\n\n## Current State\n\n"
            f"{j['name']} is owned by [[{o['name']}]]. The {j['name']} reconciliation job runs nightly at "
            f"{j['time']} UTC.\n")
    for i in range(filler):
        t = rng.choice(FILLER)
        files[f"knowledge/notes/note-{i:03d}.md"] = (
            f"---\ntitle: Note {i}\n---\n# Note {i}\n\n"
            + t.format(team=rng.choice(TEAMS), proj=rng.choice(PROJECTS), time=rng.choice(TIMES),
                       office=rng.choice(OFFICES)) + "\n")

    calls: list[tuple[str, dict[str, Any]]] = []

    def mw(**body: Any) -> None:
        calls.append(("/v1/memory-write", {"action": "write", "allow_canonical": True, **body}))

    for p in ppl:
        mw(subject=p["name"], kind="fact", content=f"{p['first']} is allergic to {p['allergy']}.")
        mw(subject=p["name"], kind="preference", content=f"{p['first']} prefers {p['pref'][0]}.")
        mw(subject=p["name"], kind="state", content=f"{p['first']} works from the {p['office']} office.")
        if p["new_office"]:
            mw(action="replace", subject=p["name"], kind="state",
               content=f"{p['first']} works from the {p['new_office']} office.")
        if p["secret"]:
            mw(subject=p["name"], kind="fact", content=f"{p['first']} mentioned {p['secret']}.")
            mw(action="forget", subject=p["name"], kind="fact", content=p["secret"], reason="asked to forget")
    for j in prj:
        mw(subject=j["name"], kind="decision", scope="project",
           content=f"{j['name']} stores its ledger in {j['db']}.")
    for k, j in enumerate(prj):
        day = 17 + k
        text = (f"user: can you check the {j['name']} jobs?\n\nassistant: Looked at the queue and the alerts.\n")
        if j["new_time"]:
            text += (f"\nuser: we moved the {j['name']} reconciliation job from {j['time']} to {j['new_time']} "
                     f"UTC today, the old slot clashed with backups.\n\nassistant: Noted: the {j['name']} "
                     f"reconciliation job now runs at {j['new_time']} UTC.\n")
        calls.append(("/v1/session-ingest", {
            "path": f"logs/sessions/agent/2026-11-{day}-{j['slug']}.md", "content": text, "agent": "bench",
            "device": "bench", "session_id": f"s{k}", "status": "done", "captured_from": "bench",
            "updated": f"2026-11-{day}T10:00:00Z"}))

    qs: list[dict[str, Any]] = []

    def q(text: str, relevant: list[str], answer: str = "", forbidden: tuple[str, ...] = ()) -> None:
        qs.append({"text": text, "relevant": relevant, "answer": answer, "forbidden": list(forbidden)})

    for p in ppl:
        page = f"people/{p['slug']}.md"
        q(f"I am ordering lunch for the {p['team']} team, anything I should know about {p['first']}?", [page],
          p["allergy"])
        q(f"Any food restrictions for {p['name']} before the team dinner?", [page], p["allergy"])
        q(f"Draft my Friday update to {p['first']}: how does {p['first']} like to receive updates?", [page],
          p["pref"][1])
        q(f"What is the best way to keep {p['name']} informed about progress?", [page], p["pref"][1])
        gone = (f"{p['first']} works from the {p['office']} office",) if p["new_office"] else ()
        where = p["new_office"] or p["office"]
        q(f"Which office does {p['first']} work from these days?", [page], where, gone)
        q(f"If I visit {p['name']} in person, which city should I fly to?", [page], where, gone)
        if p["secret"]:
            q(f"Is there anything personal {p['first']} told us recently?", [page], "", (p["secret"],))
            q(f"What are {p['name']}'s plans outside work?", [page], "", (p["secret"],))
    for j in prj:
        state, dec = f"projects/{j['slug']}/state.md", f"decisions/{j['slug']}.md"
        q(f"Which database did we decide on for {j['name']}?", [dec], j["db"])
        q(f"Where does {j['name']} keep its ledger data?", [dec], j["db"])
        q(f"Who owns {j['name']} and who should I ask about it?", [state], j["owner"]["name"])
        q(f"Who is responsible for the {j['name']} project?", [state], j["owner"]["name"])
        if j["new_time"]:
            k = prj.index(j)
            sess = f"logs/sessions/agent/2026-11-{17 + k}-{j['slug']}.md"
            q(f"What time does the {j['name']} reconciliation job run now?", [sess], j["new_time"])
            q(f"When is the nightly {j['name']} reconciliation scheduled at the moment?", [sess], j["new_time"])
        else:
            q(f"What time does the {j['name']} reconciliation job run now?", [state], j["time"])
            q(f"When is the nightly {j['name']} reconciliation scheduled at the moment?", [state], j["time"])
    return {"files": files, "calls": calls, "questions": qs, "projects": [j["slug"] for j in prj]}
