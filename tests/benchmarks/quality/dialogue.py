"""Conversational memory corpora: one short markdown file per dialogue turn, long questions.

    from tests.benchmarks.quality.dialogue import generate
    questions = generate(root, seed=3)      # writes the turns, returns the labelled questions

This is the case issue 19 describes: documents of one or two sentences, questions of
fifteen to thirty words that name the speaker, paraphrase the fact and add context the
turn does not contain. Each conversation has two speakers talking over several dated
sessions; most turns are chit-chat, some state a fact (a pet's name, a trip, a new job),
and a few mention the same subject without answering (distractors that share words with
the question). Every question is labelled with the turn(s) that answer it:

- `single-hop`: one turn answers it; the question shares some content words with it;
- `temporal`: "when ..." about an event; the answering turn says "yesterday" / "last
  week", its date is the session's (frontmatter `date`);
- `multi-hop`: two turns are needed (both are relevant);
- `open-domain`: an inference from one turn ("would she enjoy ..."), few shared words.

Deterministic: the same seed gives the same bytes (seeded `random.Random` only).
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass
from pathlib import Path

NAMES = ["Maya", "Jon", "Priya", "Tomas", "Aiko", "Lena", "Omar", "Grace", "Diego", "Nadia", "Felix",
         "Zoe", "Ravi", "Ines", "Caleb", "Hana", "Marco", "Yusuf", "Elif", "Sam"]

FILLER = [
    "Haha, that sounds like a lot of fun!",
    "Wow, I'm really happy for you, {other}.",
    "That's so great to hear. How are you feeling about it?",
    "Oh no, that sounds stressful. I hope things calm down soon.",
    "Thanks for asking! Things have been pretty busy lately, but good.",
    "I totally get that. Some weeks just fly by.",
    "What have you been up to since we last talked?",
    "Honestly, I needed to hear that today. Thank you.",
    "That's amazing! You always find such interesting things to do.",
    "I know what you mean, it's hard to find time for everything.",
    "Ha! I can picture that perfectly.",
    "Let me know how it goes, I want to hear everything.",
    "Good morning! Did you sleep well?",
    "Same here, work has been intense but I'm hanging in there.",
    "That makes sense. Take care of yourself, okay?",
    "Sounds like a plan! Talk soon.",
    "I'm glad you told me. It means a lot.",
    "Really? I had no idea. Tell me more!",
    "Yeah, the weather has been strange this week.",
    "I've been trying to slow down a bit and enjoy the small things.",
    "It was nice catching up, {other}. Let's do this again soon.",
    "You should be proud of yourself, seriously.",
    "Oh, that reminds me, I still owe you a coffee.",
    "I've been meaning to ask, how is your family doing?",
]

# Slot values. Each fact draws its own, so questions in one conversation do not collide.
PETS = [("dog", "puppy", "Biscuit"), ("cat", "kitten", "Miso"), ("rabbit", "bunny", "Clover"),
        ("dog", "greyhound", "Pepper"), ("cat", "tabby", "Olive"), ("parrot", "bird", "Kiwi")]
HOBBIES = [("pottery", "ceramics studio", "a lopsided bowl"), ("salsa dancing", "dance school", "a new routine"),
           ("rock climbing", "climbing gym", "a bouldering problem"), ("watercolor painting", "art class",
           "a painting of the harbor"), ("woodworking", "community workshop", "a small bookshelf"),
           ("guitar", "music school", "a Beatles song")]
CITIES = ["Lisbon", "Kyoto", "Denver", "Montreal", "Edinburgh", "Oaxaca", "Tallinn", "Hanoi", "Reykjavik",
          "Valencia", "Portland", "Marrakesh"]
JOBS = [("bakery", "pastry chef"), ("hospital", "nurse"), ("bookstore", "store manager"),
        ("software startup", "product designer"), ("high school", "chemistry teacher"),
        ("architecture firm", "junior architect")]
BOOKS = [("The Overstory", "trees"), ("Project Hail Mary", "space"), ("Educated", "a memoir"),
         ("Piranesi", "a strange house"), ("Sapiens", "human history"), ("Circe", "Greek myths")]
SPORTS = [("half marathon", "running"), ("triathlon", "swimming and cycling"), ("charity 10k", "running"),
          ("cycling race", "cycling"), ("open water swim", "swimming")]
FOODS = [("Thai green curry", "spicy"), ("homemade ramen", "noodles"), ("sourdough bread", "baking"),
         ("vegan lasagna", "plant-based"), ("mole poblano", "Mexican")]
INSTRUMENT_GIFTS = [("ukulele", "birthday"), ("record player", "anniversary"), ("telescope", "birthday"),
                    ("espresso machine", "housewarming"), ("sewing machine", "graduation")]
CAUSES = [("animal shelter", "walking dogs"), ("food bank", "sorting donations"),
          ("community garden", "planting vegetables"), ("literacy program", "tutoring kids"),
          ("beach cleanup group", "collecting plastic")]
OUTDOORS = [("hiking in the mountains", "camping under the stars"), ("kayaking on the lake", "fishing at dawn"),
            ("trail running", "sleeping in a tent"), ("birdwatching", "long walks in the forest")]
FEARS = [("flying", "planes"), ("heights", "tall buildings"), ("deep water", "the ocean"),
         ("public speaking", "presentations")]
SIBLINGS = [("sister", "Ana"), ("brother", "Luca"), ("sister", "Mira"), ("brother", "Theo")]


@dataclass
class Turn:
    session: int
    speaker: str
    text: str
    date: dt.date
    path: str = ""


@dataclass
class Question:
    category: str
    text: str
    relevant: list[str]
    corpus: str = ""
    answer: str = ""  # short answer (a temporal question's: the date of the answering turn's session)


def _facts(a: str, b: str, rng: random.Random) -> list[dict]:
    """Fact templates for speaker `a` (talking to `b`). Each: category, turns (one or two
    texts; `when` marks a turn whose date answers a temporal question), questions."""
    pet, hobby, city, city2 = rng.choice(PETS), rng.choice(HOBBIES), *rng.sample(CITIES, 2)
    job, job2 = rng.sample(JOBS, 2)
    book, sport, food = rng.choice(BOOKS), rng.choice(SPORTS), rng.choice(FOODS)
    gift, cause, out, fear, sib = (rng.choice(INSTRUMENT_GIFTS), rng.choice(CAUSES), rng.choice(OUTDOORS),
                                   rng.choice(FEARS), rng.choice(SIBLINGS))
    return [
        {"cat": "single-hop", "turns": [f"Guess what, we adopted a little {pet[1]} from the shelter! We named "
                                        f"{'her' if rng.random() < 0.5 else 'him'} {pet[2]}."], "a": pet[2],
         "q": [f"What name did {a} give to the {pet[0]} that {a} and the family brought home, according to "
               f"what {a} told {b} during one of their chats?",
               f"When {a} mentioned getting a new {pet[0]} from a rescue, what was the animal called?",
               f"What did {a} name the little {pet[1]} that was adopted from the shelter?"]},
        {"cat": "temporal", "turns": [f"I went to my first {hobby[0]} class at the {hobby[1]} yesterday and "
                                      f"made {hobby[2]}!"], "when": 0,
         "q": [f"When did {a} attend that very first {hobby[0]} lesson that {a} was so excited to tell {b} "
               f"about?", f"On what date did {a} first try {hobby[0]}, the new creative hobby {a} picked up?",
               f"When did {a} go to the first {hobby[0]} class at the {hobby[1]}?"]},
        {"cat": "single-hop", "turns": [f"I just got back from {city}, the food and the old streets were "
                                        f"unforgettable."], "a": city,
         "q": [f"Which city did {a} recently travel to and come back raving about the food and the old streets?",
               f"Where did {a} go on the trip that {a} described to {b} as unforgettable?",
               f"Which place did {a} just get back from, where the food and old streets were unforgettable?"]},
        {"cat": "multi-hop", "turns": [f"I handed in my notice at the {job[0]} today, it was time for a change.",
                                       f"Starting Monday I'm a {job2[1]} at a {job2[0]}, can you believe it?"], "a": f"{job2[1]} {job2[0]}",
         "q": [f"After {a} decided to leave the job at the {job[0]}, what new position did {a} take on, and "
               f"where?", f"What did {a} do for work after quitting the {job[0]}, as {a} later shared with {b}?",
               f"{a} handed in a notice at the {job[0]}; what job did {a} start afterwards?"]},
        {"cat": "single-hop", "turns": [f"I'm halfway through {book[0]} and I can't put it down, it's all "
                                        f"about {book[1]}."], "a": book[0],
         "q": [f"What is the title of the book {a} could not stop reading, the one {a} recommended to {b}?",
               f"Which novel or book about {book[1]} was {a} reading during their conversations?",
               f"What book was {a} halfway through and unable to put down?"]},
        {"cat": "temporal", "turns": [f"I finished the {sport[0]} last weekend! My legs are still sore."],
         "when": 0,
         "q": [f"When did {a} complete the {sport[0]} that {a} had been training for with so much "
               f"{sport[1]}?", f"Around what time did {a} take part in the {sport[0]} mentioned to {b}?",
               f"When did {a} finish the {sport[0]} that left {a}'s legs sore?"]},
        {"cat": "single-hop", "turns": [f"I tried making {food[0]} for the first time, it turned out better "
                                        f"than I expected."], "a": food[0],
         "q": [f"What dish did {a} cook at home for the first time and say turned out surprisingly well?",
               f"Which recipe did {a} attempt in the kitchen that {a} told {b} about?",
               f"What did {a} try making for the first time that turned out better than expected?"]},
        {"cat": "single-hop", "turns": [f"My partner surprised me with a {gift[0]} for my {gift[1]}, I "
                                        f"almost cried."], "a": gift[0],
         "q": [f"What present did {a} receive from a partner as a surprise, which nearly made {a} cry?",
               f"For which occasion did {a} get the {gift[0]}, and who gave it?",
               f"What surprise did {a}'s partner give {a} that almost made {a} cry?"]},
        {"cat": "temporal", "turns": [f"I started volunteering at the {cause[0]} last week, mostly "
                                      f"{cause[1]}."], "when": 0,
         "q": [f"When did {a} begin giving time to the {cause[0]} as a volunteer?",
               f"Since when has {a} been helping out with {cause[1]} as a volunteer, according to {a}?",
               f"When did {a} start volunteering at the {cause[0]}?"]},
        {"cat": "open-domain", "turns": [f"Nothing makes me happier than {out[0]} and {out[1]}."],
         "a": f"{out[0]} {out[1]}",
         "q": [f"Considering what {a} enjoys doing in free time, would {a} be likely to enjoy a week-long trip "
               f"to a remote national park?",
               f"What kind of vacation would suit {a} best, based on the outdoor activities {a} loves?",
               f"What makes {a} happiest to do outdoors?"]},
        {"cat": "open-domain", "turns": [f"Honestly I'm terrified of {fear[0]}, I avoid {fear[1]} whenever I "
                                         f"can."], "a": fear[0],
         "q": [f"Is {a} the kind of person who would volunteer to go first on a bungee jump or give a keynote, "
               f"given what {a} confessed to {b}?",
               f"What is one thing that makes {a} anxious and that {a} tries to stay away from?",
               f"What is {a} terrified of and tries to avoid whenever possible?"]},
        {"cat": "multi-hop", "turns": [f"My {sib[0]} {sib[1]} is moving to {city2} next month.",
                                       f"I booked flights to visit {sib[1]} in the spring, I miss {sib[1]} "
                                       f"so much."], "a": f"{city2} {sib[1]}",
         "q": [f"Which city will {a} be flying to in the spring to visit family, and which relative lives "
               f"there?", f"Where is {a}'s {sib[0]} relocating to, and does {a} plan to visit?",
               f"Where is {a}'s {sib[0]} {sib[1]} moving, and when did {a} book flights to visit?"]},
    ]


def _distractors(a: str, b: str, rng: random.Random) -> list[str]:
    """Turns on the same subjects as the facts, with other specifics, answering nothing."""
    pet, hobby, city, job = rng.choice(PETS), rng.choice(HOBBIES), rng.choice(CITIES), rng.choice(JOBS)
    book, sport, food, gift = rng.choice(BOOKS), rng.choice(SPORTS), rng.choice(FOODS), rng.choice(INSTRUMENT_GIFTS)
    return [
        f"{b} told me a funny story about a {pet[1]} at the park that kept stealing sandwiches.",
        f"My neighbor's {pet[0]} barks every morning, I'm thinking of getting earplugs.",
        f"Do you think {b} would like the new {hobby[0]} place downtown?",
        f"I'd love to visit {city} someday, everyone says the food is incredible.",
        f"I've always wanted to travel somewhere with great food and old streets.",
        f"My friend's job at the {job[0]} sounds exhausting, she works every weekend.",
        f"Have you read anything good lately? I need a new book, maybe something about {book[1]}.",
        f"I'm thinking about signing up for a {sport[0]} one day, if my knees allow it.",
        f"What's your favorite thing to cook when you have time? I've been craving {food[0]}.",
        f"Birthdays always sneak up on me, I never know what present to get. Maybe a {gift[0]}?",
        f"Volunteering sounds rewarding, I should find something like that this year.",
        f"I'm not really an outdoors person, I prefer a cozy sofa and a movie.",
        f"Family visits are the best, even when the flights are long.",
        f"When did you last take a real vacation, {b}?",
        f"My cousin just moved to {rng.choice(CITIES)} for a new job and loves it.",
        f"I watched a documentary about {rng.choice(OUTDOORS)[0]} last night, it looked peaceful.",
    ]


def conversation(seed: int, sessions: int = 16, turns_per_session: int = 20) -> tuple[list[Turn], list[dict]]:
    """The turns of one conversation (speakers alternate) and its facts with turn indexes."""
    rng = random.Random(seed)
    a, b = rng.sample(NAMES, 2)
    facts = [(a, b, f) for f in _facts(a, b, rng)] + [(b, a, f) for f in _facts(b, a, rng)]
    rng.shuffle(facts)
    start = dt.date(2023, 1, 9) + dt.timedelta(days=rng.randrange(300))
    slots: list[list[tuple[str, str]]] = [[] for _ in range(sessions)]  # (speaker, text)
    placed: list[dict] = []
    for i, (speaker, other, f) in enumerate(facts):
        texts = f["turns"]
        first = i % sessions if len(texts) == 1 else rng.randrange(sessions - 1)
        where = [first] if len(texts) == 1 else [first, rng.randrange(first + 1, sessions)]
        refs = []
        for s, t in zip(where, texts):
            slots[s].append((speaker, t))
            refs.append((s, speaker, t))
        placed.append({"fact": f, "speaker": speaker, "refs": refs})
    for speaker, other in ((a, b), (b, a)):
        for text in _distractors(speaker, other, rng):
            slots[rng.randrange(sessions)].append((speaker, text))
    turns: list[Turn] = []
    for s in range(sessions):
        date = start + dt.timedelta(days=14 * s + rng.randrange(5))
        content = slots[s]
        n_fill = max(0, turns_per_session - len(content))
        lines = content + [(speaker, rng.choice(FILLER).format(other=b if speaker == a else a))
                           for speaker in (a if k % 2 == 0 else b for k in range(n_fill))]
        rng.shuffle(lines)
        for speaker, text in lines:
            turns.append(Turn(s + 1, speaker, text, date))
    return turns, placed


def generate(root: Path, seed: int = 0, name: str | None = None, sessions: int = 16,
             turns_per_session: int = 20) -> list[Question]:
    """Write one conversation under `root` (one file per turn) and return its questions."""
    turns, placed = conversation(seed, sessions, turns_per_session)
    name = name or f"conv-{seed}"
    index: dict[tuple[int, str, str], str] = {}
    dates: dict[str, str] = {}
    counters: dict[int, int] = {}
    for t in turns:
        counters[t.session] = counters.get(t.session, 0) + 1
        n = counters[t.session]
        t.path = f"session-{t.session:02d}/turn-{n:03d}.md"
        index.setdefault((t.session - 1, t.speaker, t.text), t.path)
        dates[t.path] = t.date.isoformat()
        body = (f"---\ntitle: \"Session {t.session}, turn {n}: {t.speaker}\"\ndate: {t.date.isoformat()}\n"
                f"speaker: {t.speaker}\n---\n{t.speaker}: {t.text}\n")
        p = root / t.path
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(body, encoding="utf-8")
    out = []
    for pl in placed:
        rel = [index[(s, sp, text)] for s, sp, text in pl["refs"]]
        f = pl["fact"]
        answer = dates[rel[f["when"]]] if "when" in f else f.get("a", "")
        out.extend(Question(f["cat"], q, rel, name, answer) for q in f["q"])
    return out
