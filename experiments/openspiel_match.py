#!/usr/bin/env python3
"""A match of a tourney built-in player against OpenSpiel's C++ MCTS.

tourney's player runs as `tourney engine <spec>` and is driven over the engine protocol;
OpenSpiel's `pyspiel.MCTSBot` with a `RandomRolloutEvaluator` plays the other side, with as
many simulations as fit in the same time per move (measured on the start position before the
match). OpenSpiel is the referee: its state decides legality and the result. Colours
alternate; the OpenSpiel bot's seed changes every game.

Needs `pip install open-spiel`. Example:
    cargo build --release
    python3 experiments/openspiel_match.py --game loa --games 100 --movetime 200
"""
import argparse
import math
import subprocess
import sys
import time

import pyspiel

OPENSPIEL_NAME = {"loa": "lines_of_action", "amazons": "amazons"}


class Engine:
    """`tourney engine <spec>` over the protocol."""

    def __init__(self, command):
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.send("ugi")
        self.wait_for("ugiok")

    def send(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def wait_for(self, prefix):
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("engine closed its output")
            if line.startswith(prefix):
                return line.strip()

    def new_game(self, game):
        self.send(f"newgame {game}")
        self.send("isready")
        self.wait_for("readyok")

    def best_move(self, moves, movetime):
        self.send("position startpos" + (" moves " + " ".join(moves) if moves else ""))
        self.send(f"go movetime {movetime}")
        return self.wait_for("bestmove").split()[1]

    def close(self):
        self.send("quit")
        self.proc.wait(timeout=5)


def amazons_square(cell):
    """OpenSpiel cell (row 0 = rank 10) to our square name."""
    return f"{chr(97 + cell % 10)}{10 - cell // 10}"


def amazons_cell(square):
    return (10 - int(square[1:])) * 10 + (ord(square[0]) - 97)


def apply_ours(game, state, move):
    """Applies our notation to the OpenSpiel state."""
    if game == "loa":
        player = state.current_player()
        for action in state.legal_actions():
            if state.action_to_string(player, action) == move:
                state.apply_action(action)
                return
        raise RuntimeError(f"OpenSpiel does not accept {move}")
    frm, rest = move.split("-")
    to, arrow = rest.split("/")
    for square in (frm, to, arrow):
        cell = amazons_cell(square)
        if cell not in state.legal_actions():
            raise RuntimeError(f"OpenSpiel does not accept {move}")
        state.apply_action(cell)


def bot_turn(game, bot, state):
    """Lets the MCTS bot play one whole turn; returns it in our notation."""
    player = state.current_player()
    if game == "loa":
        action = bot.step(state)
        text = state.action_to_string(player, action)
        state.apply_action(action)
        return text
    cells = []
    for _ in range(3):
        action = bot.step(state)
        cells.append(action)
        state.apply_action(action)
    return f"{amazons_square(cells[0])}-{amazons_square(cells[1])}/{amazons_square(cells[2])}"


def simulations_for(game_obj, movetime_ms, uct_c):
    """Simulations the bot runs in `movetime_ms` on the start position."""
    evaluator = pyspiel.RandomRolloutEvaluator(1, 7)
    sims = 200
    while True:
        bot = pyspiel.MCTSBot(game_obj, evaluator, uct_c, sims, 1000, True, 7, False)
        state = game_obj.new_initial_state()
        started = time.process_time()
        bot.step(state)
        spent = time.process_time() - started
        if spent > 0.2 or sims > 200_000:
            return max(1, int(sims * movetime_ms / 1000 / spent))
        sims *= 4


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", choices=["loa", "amazons"], required=True)
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--movetime", type=int, default=200, help="milliseconds per move, both sides")
    parser.add_argument("--player", default="ab", help="tourney player spec")
    parser.add_argument("--tourney", default="./target/release/tourney")
    parser.add_argument("--uct-c", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    game_obj = pyspiel.load_game(OPENSPIEL_NAME[args.game])
    sims = simulations_for(game_obj, args.movetime, args.uct_c)
    print(f"OpenSpiel MCTSBot: {sims} simulations per decision (~{args.movetime} ms)", flush=True)
    engine = Engine([args.tourney, "engine", args.player])
    wins = draws = losses = 0
    started = time.time()
    for g in range(args.games):
        ours = g % 2  # OpenSpiel player index of tourney's side: 0 moves first
        evaluator = pyspiel.RandomRolloutEvaluator(1, args.seed + g)
        bot = pyspiel.MCTSBot(game_obj, evaluator, args.uct_c, sims, 1000, True, args.seed + g, False)
        engine.new_game(args.game)
        state = game_obj.new_initial_state()
        moves = []
        while not state.is_terminal():
            if state.current_player() == ours:
                move = engine.best_move(moves, args.movetime)
                apply_ours(args.game, state, move)
            else:
                move = bot_turn(args.game, bot, state)
            moves.append(move)
        result = state.returns()[ours]
        if result > 0:
            wins += 1
        elif result < 0:
            losses += 1
        else:
            draws += 1
        n = wins + draws + losses
        print(f"game {g + 1}: tourney {'first' if ours == 0 else 'second'}, {len(moves)} plies, "
              f"{'win' if result > 0 else 'loss' if result < 0 else 'draw'}; total +{wins} ={draws} -{losses}",
              flush=True)
    engine.close()
    n = wins + draws + losses
    score = (wins + draws / 2) / n
    var = (wins * (1 - score) ** 2 + draws * (0.5 - score) ** 2 + losses * score ** 2) / n
    margin = 1.959964 * math.sqrt(var / n)
    print(f"\n{args.player} vs OpenSpiel MCTS ({args.game}, {args.movetime} ms/move, {n} games): "
          f"+{wins} ={draws} -{losses}, score {score:.1%} ± {margin:.1%} (95%), "
          f"{time.time() - started:.0f} s", flush=True)


if __name__ == "__main__":
    sys.exit(main())
