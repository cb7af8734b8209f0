"""Per-actor preferences in wake (issue 31): an actor's own page, core/actors/<stem>.md,
is in that actor's wake and in no other actor's, whatever the profile (privacy aside)."""

from __future__ import annotations

from pathlib import Path

from srvkit import CORPUS, open_live, write_files

ACTORS = {
    "core/actors/coder.md": "---\ntitle: Coder's preferences\ntype: core\npinned: true\n---\n# Coder\n\n"
                            "Intro that stays out.\n\n## Preferences\n\n- Prefer small diffs with the tortoise style.\n",
    "core/actors/writer.md": "---\ntitle: Writer's preferences\ntype: core\npinned: true\n---\n# Writer\n\n"
                             "- Always use the flamingo voice in drafts.\n",
}


def test_wake_shows_an_actors_own_preferences_and_never_anothers(tmp_path: Path) -> None:
    from commonplace.compiler.sessions.actors import personal_path
    from commonplace.server import ServerConfig, create_app

    root = write_files(tmp_path / "corpus", {**CORPUS, **ACTORS})
    live = open_live(root, tmp_path / "site", real_search=False)
    try:
        app = create_app(live, ServerConfig(corpus=root, out=tmp_path / "site", loopback_reads=True))
        c = app.test_client()
        for profile in ("default", "casual", "coding", "writing"):
            coder = c.post("/v1/wake", json={"agent": "coder", "profile": profile, "debug": True}).get_json()
            assert "tortoise style" in coder["block"] and "flamingo voice" not in coder["block"], profile
            assert "Intro that stays out" not in coder["block"]
            assert "core/actors/coder.md" in coder["sources"]
            writer = c.post("/v1/wake", json={"agent": "writer", "profile": profile}).get_json()
            assert "flamingo voice" in writer["block"] and "tortoise style" not in writer["block"], profile
            other = c.post("/v1/wake", json={"agent": "reviewer", "profile": profile}).get_json()
            assert "flamingo" not in other["block"] and "tortoise" not in other["block"]
        assert personal_path("Coder") == "core/actors/coder.md"
        assert personal_path("../x").startswith("core/actors/x-")  # an unsafe name never leaves the folder
    finally:
        live.close()
