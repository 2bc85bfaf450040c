"""``ppo:SET.yaml``: one policy per number of players still in, from a small manifest."""

from pathlib import Path

from scat_env import GameState, Rules

POLICIES = Path(__file__).resolve().parent.parent / "policies"
GENERAL, V1, V2 = (str(POLICIES / f) for f in ("scat_ppo.npz", "scat_ppo_2p.npz", "scat_ppo_3p.npz"))




def _manifest(tmp_path: Path, text: str, name: str = "set.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _set(tmp_path: Path) -> str:
    return _manifest(tmp_path, f"format: scat-policy-set\npolicies:\n  2: {V1}\n  3: {V2}\n"
                               f"  default: {GENERAL}\n")


def _three_with_one_out() -> GameState:
    rules = Rules()
    deck = list(range(52))
    return GameState.from_parts(rules, hands=[deck[:3], [], deck[3:6]], stock=deck[7:],
                                discard=[deck[6]], lives=[2, 0, 3], dealer=2,
                                current_player=0, hand_number=5)


































