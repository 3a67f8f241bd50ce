"""The search's tunable constants: one table, one source of truth.

Each entry names a number the search uses (a margin, a reduction divisor, a history bound).
The search reads them at run time from `ctx.sp` (an int64 array filled from `defaults()`), so a
tuner can change them per game without recompiling; `SP_<NAME>` is each entry's index.
Tooling (USI options when tuning, shogiarena's `usi_tunables`, SPSA) reads `PARAMS`.
This module is pure Python: importing it must not import numba.
"""

from typing import NamedTuple


class Param(NamedTuple):
    name: str  # CamelCase, as a USI option would name it
    default: int
    lo: int  # the range a tuner may explore
    hi: int
    step: int  # SPSA's perturbation c at the end of a run (fishtest's c_end)
    doc: str


# one row per constant, so the table reads as a table: not reformatted
# fmt: off
PARAMS: tuple[Param, ...] = (
    # pruning before the move loop
    Param("RazorMargin", 320, 100, 800, 20, "razoring: static + margin*depth below alpha"),
    Param("FutilityMargin", 110, 40, 300, 10, "reverse futility: static - margin*(depth-improving) >= beta"),
    Param("FutilityTtGuard", 0, 0, 1, 1, "1: no reverse futility at a node that is or was on the PV (the TT's PV flag) or whose TT move is quiet, as Stockfish and YaneuraOu guard it (0: at every non-PV node; not measured yet)"),
    Param("FailHighDamp", 0, 0, 1, 1, "1: a fail-high away from the PV is pulled towards beta before it is returned and stored (reverse futility returns the mean of the static value and beta; a node's best (best*depth + beta)/(depth + 1)), as Stockfish and YaneuraOu do, so that an optimistic bound does not feed the TT-refined evaluation of later nodes (0: fail-soft values as they are; 1 scored 13.3% against YaneuraOu at 100,000 nodes a move in 60 games, the defaults 16.7%; no SPRT yet, docs/bench.md)"),
    Param("FutilityDepth", 6, 2, 12, 1, "reverse futility up to this depth (plies)"),
    Param("NullMoveDepth", 2, 1, 6, 1, "null move from this depth (plies)"),
    Param("NullMoveBase", 3, 1, 6, 1, "null-move reduction: base + depth/NullMoveDiv plies"),
    Param("NullMoveDiv", 4, 2, 8, 1, "null-move reduction: depth divisor"),
    Param("NullMoveEvalDiv", 200, 50, 600, 20, "null-move reduction: one ply more per this much of static above beta"),
    Param("NullMoveEvalMax", 3, 0, 7, 1, "null-move reduction: at most this many plies more for static above beta (0: none)"),
    Param("NullMoveMargin", 0, 0, 800, 50, "the null move only where the static evaluation is at least beta + this - NullMoveMarginDepth a ply; YaneuraOu asks for 400 - 23 a ply, so that a pass is tried only where it is likely to hold (0: beta alone; 400 with NullMoveCutOnly scored 5.0% against YaneuraOu at 100,000 nodes a move in 60 games, the defaults 16.7%; no SPRT yet, docs/bench.md)"),
    Param("NullMoveMarginDepth", 23, 0, 60, 2, "NullMoveMargin's fall per ply of depth"),
    Param("NullMoveCutOnly", 0, 0, 1, 1, "1: the null move only at expected cut nodes, as YaneuraOu and Stockfish do (0: at every non-PV node; with NullMoveMargin 400 scored 5.0% against YaneuraOu at 100,000 nodes a move, see NullMoveMargin)"),
    Param("TtValueEval", 1, 0, 1, 1, "1: razoring, reverse futility, the null move and the quiescence stand pat judge by the TT's value instead of the static evaluation where the entry's bound puts the truth beyond it (a lower bound above it, an upper bound below), as Stockfish and YaneuraOu do (0: the static evaluation; 1 measured +45.4 +- 22.9 Elo in 878 games against 0, SPRT H1, docs/bench.md)"),
    Param("ProbCutDepth", 5, 0, 12, 1, "ProbCut from this depth (plies; 0: off; 5 measured +7.2 +- 13.0 Elo in 2,643 games, undecided, docs/bench.md). Default since 2026-12-03 with ProbCutDepth 5, SingularNegative 1, LmrRoot 1 and QsQuietEvasions 1, measured together against all four off: +24.4 +- 15.9 Elo in 1,726 games, SPRT H1"),
    Param("ProbCutMargin", 200, 50, 500, 20, "ProbCut: a capture that beats beta + this in a search 4 plies shallower cuts off"),
    Param("IirDepth", 4, 2, 10, 1, "internal iterative reduction from this depth (plies)"),
    Param("Mate1Depth", 4, 1, 10, 1, "mate-in-1 probe from this depth (plies), when Mate1Ply is on"),
    Param("SingularDepth", 6, 0, 12, 1, "singular extension of the TT move from this depth (plies; 0: off)"),
    Param("SingularMargin", 2, 0, 16, 1, "singular extension: the other moves searched against TT value - margin*depth"),
    Param("SingularExtra", 0, 0, 2, 1, "plies more than one for a singular TT move at a non-PV node; Stockfish and YaneuraOu give a quiet one two more and a capture one or two (0: one ply in all; 2 scored 19.2% against YaneuraOu at 100,000 nodes a move in 60 games, the defaults 16.7%; no SPRT yet, docs/bench.md)"),
    Param("MateThreatExtension", 0, 0, 4, 1, "half plies more for a node where the null move's search finds that passing loses to a mate, a threat the static evaluation above beta does not see (0: off; not measured yet)"),
    Param("CheckExtensionDepth", 0, 0, 16, 1, "a checking move is extended by half a ply from this depth (plies) on (0: at every depth); YaneuraOu extends a check only from depth 10, since in shogi one check follows another (10 with CheckExtensionSee 1 measured -3.4 +- 19.4 Elo in 1,133 games, undecided, docs/bench.md)"),
    Param("CheckExtensionSee", 0, 0, 1, 1, "1: only checks that lose no material by SEE are extended, as YaneuraOu extends only those (0: every check; with CheckExtensionDepth 10 measured -3.4 +- 19.4 Elo in 1,133 games, undecided)"),
    Param("SingularNegative", 1, 0, 2, 1, "plies the TT move is searched shallower where it is not singular and a cutoff is expected (TT value at or above beta, or a cut node; 0: off; 1 measured +3.9 +- 16.6 Elo in 1,624 games, undecided, docs/bench.md). Default since 2026-12-03 with ProbCutDepth 5, SingularNegative 1, LmrRoot 1 and QsQuietEvasions 1, measured together against all four off: +24.4 +- 15.9 Elo in 1,726 games, SPRT H1"),
    # pruning in the move loop (quiet moves)
    Param("LmpDepth", 8, 2, 16, 1, "move-count pruning up to this depth (plies)"),
    Param("LmpBase", 3, 0, 10, 1, "move-count pruning: quiets after base + depth^2 moves are skipped"),
    Param("LmpNotImproving", 0, 0, 1, 1, "1: move-count pruning after half as many moves where the static evaluation is not improving, as Stockfish does (0: off; 1 measured +11.8 +- 17.7 Elo in 1,447 games before PruneLmrDepth, +1.7 +- 32.7 in 416 after, docs/bench.md)"),
    Param("LmpChecks", 0, 0, 1, 1, "1: move-count pruning also skips quiet checks, as YaneuraOu's and Stockfish's count every move and then skip every quiet one: with a rook or bishop in hand a shallow node can have a dozen checking drops, ordered first among the quiets (QuietCheckBonus) (0: a quiet check is never pruned by its move number; not measured yet)"),
    Param("PvPrune", 0, 0, 1, 1, "1: the move loop's pruning of late moves (move count, futility, history, SEE) also at PV nodes below the root, as Stockfish and YaneuraOu prune every node's late moves; the razoring, reverse futility and null move before the moves stay off the PV. With pieces in hand a PV node can have 200 moves, and at depth 2 this engine's PV child of depth 1 searched all of them: the shallow trees were two to five times YaneuraOu's (0: no pruning of moves at a PV node; 1 measured +4.1 +- 22.7 Elo in 838 games, undecided, docs/bench.md)"),
    Param("FutilityMoveDepth", 4, 1, 10, 1, "futility pruning of quiets up to this depth (plies)"),
    Param("FutilityMoveBase", 160, 0, 500, 20, "futility of quiets: static + base + margin*depth <= alpha"),
    Param("FutilityMoveMargin", 130, 40, 300, 10, "futility of quiets: margin per ply"),
    Param("PruneLmrDepth", 1, 0, 1, 1, "1: futility and SEE pruning of quiets judge a move by the depth LMR would leave it (depth - 1 - the table's reduction), as Stockfish does, not by the node's depth (0: the node's depth; 1 measured +40.5 +- 21.5 Elo in 949 games, docs/bench.md)"),
    Param("HistoryPruneDepth", 3, 1, 8, 1, "history pruning up to this depth (plies)"),
    Param("HistoryPrune", 3000, 500, 10000, 250, "quiet moves with history below -this*depth are skipped"),
    Param("SeeDepth", 6, 1, 12, 1, "SEE pruning of captures and quiet moves up to this depth (plies)"),
    Param("SeeCaptureMargin", 200, 50, 600, 20, "captures with SEE below -margin*depth are skipped"),
    Param("SeeQuietMargin", 60, 10, 200, 5, "quiet moves and checks with SEE below -margin*depth^2 are skipped"),
    Param("SeeQuietCheck", 0, 0, 1, 1, "1: a quiet check is SEE-pruned as a capture is, below -SeeCaptureMargin*depth by the node's depth, as Stockfish and YaneuraOu judge checks: LMR never reduces a check, and a sacrifice that checks is how a shogi attack mates (0: as a quiet move, below -SeeQuietMargin*depth^2 by the depth LMR would leave it; not measured yet)"),
    Param("SeeEvasions", 0, 0, 1, 1, "1: SEE pruning in check too, once an evasion has saved the king: an interposing drop or other evasion that loses material is skipped by the same rules, as Stockfish and YaneuraOu prune in check and as QsEvasionSee does in the quiescence search (0: no evasion pruned; not measured yet)"),
    # late move reductions
    Param("AlphaRaiseReduce", 0, 0, 2, 1, "plies less for the later moves of a PV node once one raised alpha, at nodes 3 to 11 plies deep, as Stockfish and YaneuraOu do (0: off; 1 measured +2.0 +- 17.8 Elo in 1,386 games, undecided, docs/bench.md)"),
    Param("LmrMinDepth", 3, 1, 6, 1, "reductions from this depth (plies)"),
    Param("LmrBase", 60, 0, 150, 10, "reduction table: base/100 + ln(depth)*ln(moves)*100/LmrDiv"),
    Param("LmrDiv", 150, 80, 300, 10, "reduction table divisor (x100)"),
    Param("LmrHistoryGood", 3591, 500, 7000, 250, "one ply less for quiets with history above this"),
    Param("LmrHistoryBad", 7183, 1000, 14000, 500, "one ply more for quiets with history below -this"),
    Param("LmrHistoryDiv", 0, 0, 20000, 500, "history in half plies of LMR: -2*history/this, from one ply less to two more, instead of LmrHistoryGood/Bad's one ply each way (0: those; 3591 measured -8.0 +- 24.0 Elo in 784 games, docs/bench.md)"),
    Param("LmrNotImproving", 0, 0, 2, 1, "this many plies more where the static evaluation is not improving (0: off; 1 measured -61 Elo, docs/bench.md)"),
    Param("LmrBadCaptures", 0, 0, 1, 1, "1: captures that lose material by SEE are reduced as quiet moves are (0: off; 1 measured +0.7 +- 13.3 Elo in 2,400 games, docs/bench.md)"),
    Param("LmrPvNode", 1, 0, 4, 1, "plies less for late moves at a PV node; YaneuraOu takes off about two to four there (one for the PV node, one to three more for its PV flag), so its PV is the widest part of its tree (at 100,000 nodes a move against YaneuraOu 2 and 3 scored 15.8% and 8.3% in 60 games against 16.7% for 1, docs/bench.md)"),
    Param("LmrEvasions", 0, 0, 1, 1, "1: late quiet evasions are reduced as late quiet moves are, as Stockfish and YaneuraOu reduce in check too; a check from afar can be met by a drop of each piece in hand on each square between, dozens of moves (0: no move reduced in check; not measured yet)"),
    Param("LmrParentLate", 0, 0, 2, 1, "plies less for the late moves of a node reached by a late move of the opponent (beyond LmrParentLateMoves), as Stockfish did: the scout of a late root move is an expected cut node whose refutation may itself be a late move, a drop low in the history order (0: off; 1 measured +9.6 +- 14.4 Elo in 2,128 games, SPRT undecided at LLR 0.86, docs/bench.md)"),
    Param("LmrParentLateMoves", 7, 1, 40, 1, "LmrParentLate: a move is late from this move number on (exclusive)"),
    Param("LmrRootReplies", 0, 0, 2, 1, "plies less for the late moves of the nodes one ply below the root, the replies to each root move: where this engine's move lost against YaneuraOu at equal nodes, a search of the position after it with every reply unreduced found the refutation in 16 of 22 positions (0: off; not measured yet)"),
    Param("LmrDropNearKing", 0, 0, 2, 1, "plies less for a late drop within LmrDropNearKingDistance squares (files and ranks) of the enemy king: a piece dropped beside the king is how a shogi attack begins, and history, which has seen few such drops, orders it late (0: off; 2 measured +1.2 +- 23.1 Elo in 845 games, undecided, docs/bench.md)"),
    Param("LmrDropNearKingDistance", 2, 1, 4, 1, "LmrDropNearKing: the most files, and the most ranks, between the drop and the king (a knight dropped three ranks away already attacks a square beside the king)"),
    Param("LmrCutNode", 1, 0, 3, 1, "plies more for late moves at an expected cut node (YaneuraOu adds about 2.5)"),
    Param("TtPvReduce", 0, 0, 2, 1, "plies less for late moves at a non-PV node that is or was on the PV of an earlier search (the TT's PV flag), whose moves are likelier to matter, as Stockfish and YaneuraOu reduce less there (0: off; not measured yet)"),
    Param("LmrRoot", 1, 0, 1, 1, "1: the root's late quiet moves (from the third) are reduced as a PV node's are, and searched again unreduced where the reduced search beats alpha, as Stockfish and YaneuraOu do; the root has 80-130 moves in a shogi middle game (0: every root move to the full depth; 1 measured +5.3 +- 27.2 Elo in 586 games, undecided, docs/bench.md). Default since 2026-12-03 with ProbCutDepth 5, SingularNegative 1, LmrRoot 1 and QsQuietEvasions 1, measured together against all four off: +24.4 +- 15.9 Elo in 1,726 games, SPRT H1"),
    Param("LmrChecks", 0, 0, 1, 1, "1: quiet checks are reduced too, a ply less than other quiet moves, as YaneuraOu reduces every late move (0: checks are never reduced; 1 with CheckExtensionDepth 16 measured -8.0 +- 17.5 Elo in 1,440 games, undecided, docs/bench.md)"),
    Param("LmrTtCapture", 0, 0, 2, 1, "this many plies more for quiet moves where the TT move is a capture, which the quiets rarely beat (0: off; 1 measured -7.7 +- 31.3 Elo in 454 games, undecided, docs/bench.md)"),
    Param("LmrResearchAdjust", 0, 0, 1, 1, "1: a late move whose reduced search beat alpha is searched again a ply deeper where it beat the node's best by LmrDeeperMargin + 2 a ply, a ply shallower where by less than LmrShallowerMargin, as Stockfish and YaneuraOu do (0: at the unreduced depth; not measured yet)"),
    Param("LmrDeeperMargin", 43, 0, 200, 5, "LmrResearchAdjust: a ply deeper above the node's best + this + 2 a ply"),
    Param("LmrShallowerMargin", 9, 0, 60, 2, "LmrResearchAdjust: a ply shallower below the node's best + this"),
    # quiescence, scores, history
    Param("DeltaMargin", 200, 0, 600, 20, "qsearch delta pruning: stand pat + gain + margin < alpha"),
    Param("QsEvasionSee", 90, 0, 600, 20, "qsearch in check: once an evasion has saved the king, the quiet evasions (drops and king or piece moves that interpose) with SEE below -this are skipped, as YaneuraOu does with 90 (0: off; 90 measured +14.8 +- 11.3 Elo in 3,443 games against 0, SPRT H1, docs/bench.md)"),
    Param("QsFailHighDamp", 0, 0, 1, 1, "1: the quiescence search's fail-highs are pulled towards beta before they are returned and stored, as Stockfish and YaneuraOu pull them: a stand-pat cutoff returns the mean of the static value and beta, a move's fail-high (3*best + beta)/4, so that the optimistic value of a quiet-looking position does not travel up the tree and into the TT as a bound (0: fail-soft values as they are; not measured yet)"),
    Param("QsStandPatStore", 0, 0, 1, 1, "1: a stand-pat cutoff at a position the TT does not hold is stored there, a lower bound with the static evaluation and no move, as Stockfish and YaneuraOu store it: the next visit of that leaf, most often by a transposition of captures, is cut off by the table without an evaluation (0: a stand-pat cutoff leaves the table alone; not measured yet)"),
    Param("QsQuietEvasions", 1, 0, 1, 1, "1: the quiescence search in check, once an evasion has saved the king, searches a quiet evasion (a king step, an interposing move or drop) only where its continuation history after the moves one and two plies above exceeds QsQuietEvasionHistory, as YaneuraOu prunes them: captures of the checker stay, and a check from afar no longer opens a drop of every piece in hand on every square between (0: every quiet evasion that QsEvasionSee keeps; 1 measured +8.2 +- 14.2 Elo in 2,176 games, undecided, docs/bench.md). Default since 2026-12-03 with ProbCutDepth 5, SingularNegative 1, LmrRoot 1 and QsQuietEvasions 1, measured together against all four off: +24.4 +- 15.9 Elo in 1,726 games, SPRT H1"),
    Param("QsQuietEvasionHistory", 2800, -4000, 12000, 400, "QsQuietEvasions: the continuation history (two entries, each within +-16,384) a quiet evasion must exceed; YaneuraOu asks 5,095 of entries about twice as wide"),
    Param("QsChecks", 0, 0, 32, 1, "the quiescence search's first ply (the one a full-width node of depth 0 enters), not in check and below beta after the captures, also searches up to this many quiet checks, board moves and drops, that lose nothing by SEE, their replies searched in full as evasions, as Stockfish did at its DEPTH_QS_CHECKS: a shogi attack is a run of checks, most of them drops, that captures alone never see (0: captures only; 8 measured +1.9 +- 19.7 Elo in 1,127 games, undecided, docs/bench.md)"),
    Param("QsMate1FirstPly", 0, 0, 1, 1, "1: the quiescence search looks for a mate in one (Mate1PlyQuiescence) only at its first ply, the one a full-width node of depth 0 enters; on the network's bench 78% of its probes are below that ply, 8% of all find a mate, and they take about 13% of the search's time (0: at every ply, as YaneuraOu does; 1 made the search 26% faster on the bench and measured -19.0 +- 34.7 Elo in 348 games, docs/bench.md)"),
    Param("QsMoveCount", 2, 0, 16, 1, "qsearch, not in check: past this many captures only recaptures on the last move's square are searched, as YaneuraOu and Stockfish do (0: every capture; 2 measured +24.1 +- 15.8 Elo in 1,760 games against 0, docs/bench.md)"),
    Param("SuperiorValue", 1500, 300, 3000, 100, "same board, more in hand: score of that repetition"),
    Param("HistoryBonusMul", 32, 8, 96, 4, "history bonus: mul*depth^2 + add, at most max"),
    Param("HistoryBonusAdd", 64, 0, 400, 16, "history bonus: constant term"),
    Param("HistoryBonusMax", 2000, 500, 4000, 100, "history bonus: cap (below every table's bound)"),
    Param("ContinuationFar", 0, 0, 2, 1, "1: quiet moves are also ordered and rewarded by the continuation history of the move four plies above, 2: and of the move six plies above, as Stockfish and YaneuraOu do, since a plan spans more than one reply (0: the moves one and two plies above only; 2 measured +1.6 +- 17.2 Elo in 1,520 games, undecided, docs/bench.md)"),
    Param("TtCutoffHistory", 0, 0, 1, 1, "1: where the TT's lower bound ends a node and its move is quiet, that move is rewarded as a cutoff of the node (history, killer, counter move), as Stockfish and YaneuraOu do, so that the histories also learn from the cutoffs the table answers (0: only searched cutoffs teach; not measured yet)"),
    Param("FailLowPriorBonus", 0, 0, 1, 1, "1: where every move of a node failed low (at 3 plies or more, or on the PV), the opponent's quiet move that led there is rewarded in its histories, as Stockfish and YaneuraOu reward the move that refuted them all (0: off; 1 measured -14.6 +- 27.5 Elo in 573 games, undecided, docs/bench.md)"),
    Param("QuietCheckBonus", 16384, 0, 32768, 1024, "quiet moves that check the king directly (drops included, discovered checks not) are ordered by their history plus this, as Stockfish and YaneuraOu order them, so that a check is tried before the quiet moves of like history: most attacks on a shogi king are checks by drops (0: history alone; 16384 measured +49.7 +- 24.1 Elo in 810 games against 0, SPRT H1, docs/bench.md)"),
    Param("QuietCheckSee", 0, 0, 1, 1, "1: QuietCheckBonus only for a check that loses at most QuietCheckSeeMargin by SEE, as Stockfish and YaneuraOu give their check bonus: a checking piece the king or a defender takes for nothing is ordered by its history alone (0: every direct check; 1 measured +6.7 +- 21.1 Elo in 989 games, undecided, docs/bench.md)"),
    Param("QuietCheckSeeMargin", 75, 0, 400, 10, "QuietCheckSee: the most a check may lose by SEE and keep its bonus (a pawn taken is 200: 90 on the board and 110 in hand)"),
    Param("LowPlyHistory", 0, 0, 32, 1, "quiet moves in the first four plies below the root are also ordered by a history of this search alone, by ply, times this / (1 + 2*ply), as Stockfish orders them: the replies to the root moves, where a late refutation decides the root's choice, learn from this move's search and not from every position's (0: off; 8 measured -2.2 +- 21.9 Elo in 802 games, undecided, docs/bench.md)"),
    Param("CaptureHistory", 0, 0, 128, 8, "captures that keep their material by SEE: MVV-LVA plus capture history * this/64 (0: off; 8 measured -2.2 +- 16.5 Elo in 1,612 games, undecided, docs/bench.md)"),
    Param("CorrectionDiv", 8, 2, 32, 1, "correction history: the three entries' sum / (4*this) centipawns"),
    # the classic techniques (docs/EXPERIMENTS.md; each used only when its switch is on)
    Param("MidDepth", 3, 2, 10, 1, "multi-iterative deepening: nodes without a TT move from this depth (plies)"),
    Param("MidStart", 1, 1, 4, 1, "multi-iterative deepening: depth of the first shallow iteration (plies)"),
    Param("OslDepth", 2, 1, 10, 1, "one-side-limited PVS: scouts of PV nodes from this depth (plies)"),
    Param("OslSide", 0, 0, 1, 1, "one-side-limited PVS: 0 limits the refuting side (exact), 1 the PV node's side (approximate)"),
    Param("ShallowOrderDepth", 6, 2, 16, 1, "shallow-search ordering at nodes from this depth (plies)"),
    Param("ShallowOrderPlies", 0, 0, 4, 1, "shallow-search ordering: depth of each move's search (plies, 0: quiescence)"),
    Param("ShallowOrderMargin", 200, 0, 2000, 50, "shallow-search ordering: window of alpha - margin .. beta + margin"),
    # the root's move when a clock or a node limit stops an iteration (read by search/searcher.py)
    Param("RootFailHighMove", 1, 0, 1, 1, "1: stopped inside an iteration, the search plays the root move that failed high in it, whose search in the wider window was not finished, as Stockfish and YaneuraOu play their first root move, with the TT's reply as its move to ponder on (0: the best move of the last iteration that finished, unless a root move of the stopped window's search was finished; 1 measured +46.4 +- 23.2 Elo, SPRT H1 in 837 games, docs/bench.md)"),
    Param("AspirationFailHighReduction", 0, 0, 1, 1, "1: each time an aspiration window fails high, the iteration is searched again a ply shallower (a fail low searches it at full depth again), as Stockfish and YaneuraOu do: the move that failed high is likely good, and a shallower search confirms it for fewer nodes (0: every window searched at the iteration's depth; 1 measured -4.5 +- 19.5 Elo in 1,168 games, SPRT undecided, docs/bench.md)"),
)
# fmt: on

INDEX = {p.name: i for i, p in enumerate(PARAMS)}


def defaults() -> list[int]:
    return [p.default for p in PARAMS]


# SP_<UPPER_SNAKE> index constants, for numba code (module-level ints are compile-time constants)
def _snake(name: str) -> str:
    out = ""
    for i, ch in enumerate(name):
        if ch.isupper() and i > 0 and not name[i - 1].isupper():
            out += "_"
        out += ch.upper()
    return out


for _i, _p in enumerate(PARAMS):
    globals()["SP_" + _snake(_p.name)] = _i
SP_NB = len(PARAMS)
