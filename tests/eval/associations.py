#!/usr/bin/env python3
"""Zero-overlap recall through concept cards.

A small hand-written archive (Chinese and English). Every query shares no
content word with its target record; the only bridge is a concept card whose
colloquial aliases the query happens to use. Prints, per case, whether the
association channel surfaces the target in its top 6 (and where it lands in
the fused list), then the total.

    python3 tests/eval/associations.py
"""

import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))

from personal_understanding import archive, capture, receipts, records  # noqa: E402
from personal_understanding.retrieval.index import open_recall, record_text, weighted_terms  # noqa: E402
from personal_understanding.retrieval.probe import probe  # noqa: E402

# (said, target kind, target title, concept title, concept aliases, query)
CASES = [
    ("我更喜欢浅烘的豆子，酸香明亮的那种", "preference", "偏好浅烘的豆子", "咖啡口味",
     ["焦糊味", "深烘", "咖啡不好喝", "苦咖啡"], "这咖啡一股焦糊味"),
    ("刚看完《漫长的季节》，后劲好大", "event", "看完《漫长的季节》", "追剧口味",
     ["剧荒", "没剧看", "追剧", "看什么剧"], "剧荒了"),
    ("人多的地方我会头疼，能不去就不去", "rule", "人多的地方会头疼", "出门玩",
     ["周末去哪玩", "出去玩", "景点", "逛街"], "周末去哪玩"),
    ("第一人称的游戏我受不了，会恶心", "state", "第一人称游戏会恶心", "晕3D",
     ["晕3D", "3D眩晕", "头晕想吐", "玩吐了"], "玩了半小时就头晕想吐"),
    ("我在准备公务员考试，明年四月笔试", "decision", "准备公务员考试", "考公",
     ["考公", "上岸", "国考", "编制"], "我什么时候能上岸"),
    ("游戏我一定等促销才入手", "preference", "游戏等促销才入手", "史低",
     ["史低", "降价", "折扣", "打折"], "塞尔达降价了吗"),
    ("我对花生过敏，吃一点就起疹子", "fact", "对花生过敏", "饮食禁忌",
     ["忌口", "坚果", "过敏源", "不能吃"], "这家店的沙拉酱里有坚果吗"),
    ("最近在减脂，晚上不吃碳水", "state", "晚上不吃碳水", "减肥",
     ["减肥", "热量", "卡路里", "体重"], "这个蛋糕热量高吗"),
    ("对我来说家人排在工作前面", "value", "家人排在工作前面", "工作和生活",
     ["周末去公司", "老板", "调休", "996"], "老板又让周末去公司"),
    ("小时候每个暑假都在外婆家过", "event", "在外婆家过暑假", "童年夏天",
     ["蝉鸣", "知了", "冰棍", "凉席"], "听到蝉鸣有点怀念"),
    ("I always pick an aisle seat, window seats make me claustrophobic", "preference",
     "prefers aisle seats", "air travel", ["flight", "airport", "boarding pass", "layover"],
     "booking my flight to Denver tomorrow"),
    ("No caffeine after 2pm for me or I can't sleep", "rule", "no caffeine after 2pm",
     "coffee habits", ["latte", "espresso", "cold brew", "cup of joe"], "want to grab a latte at 5?"),
    ("Our dog Max passed away in March. I still miss him.", "event", "Max the dog passed away",
     "pets and loss", ["shelter", "adopt", "rescue", "puppy"], "thinking about going to the shelter this weekend"),
    ("I'm training for a half marathon in April", "state", "training for a half marathon", "running",
     ["jogging", "shin splints", "sneakers", "10k"], "my shins hurt after jogging"),
    ("I really can't stand horror movies", "preference", "dislikes horror movies", "movie night",
     ["netflix", "cinema", "something to watch", "film"], "what should we watch on netflix tonight"),
    ("I'm allergic to cats, my eyes swell up", "fact", "allergic to cats", "visiting friends with pets",
     ["kitten", "fur", "pet hair", "sneezing"], "my friend just got a kitten and invited me over"),
    ("I love heavy hit-stop combat like in Monster Hunter", "preference", "loves combat with heavy hit-stop",
     "game feel", ["hits feel weightless", "floaty", "no impact"], "the fights in this game are so floaty"),
    ("Never put meetings before 10am on my calendar", "rule", "no meetings before 10am", "mornings",
     ["8am", "early", "first thing", "sunrise"], "can we do 8am on Tuesday?"),
]


# Background so that spreading has to choose: everyday records, a hub person
# mentioned everywhere, and concept cards that lead elsewhere.
BACKGROUND = [
    ("今天和妈妈去超市买了菜", "event", "和妈妈去超市"),
    ("妈妈做的红烧肉还是那个味道", "event", "妈妈做红烧肉"),
    ("下周要交季度报告，有点赶", "state", "季度报告要赶"),
    ("周三晚上去打了羽毛球", "event", "周三打羽毛球"),
    ("新买的键盘手感不错", "event", "买了新键盘"),
    ("我喜欢在家做饭，比外卖健康", "preference", "喜欢在家做饭"),
    ("地铁太挤了，改骑车上班", "decision", "改骑车上班"),
    ("I finished reading a book about the history of salt", "event", "finished a book about salt"),
    ("My sister is moving to Lisbon next year", "event", "sister moving to Lisbon"),
    ("I prefer tea in the morning", "preference", "tea in the morning"),
    ("Went to a pottery class on Saturday", "event", "pottery class"),
    ("My manager praised the migration project", "event", "praised for the migration"),
]
DISTRACTOR_CARDS = [
    ("做饭", ["下厨", "菜谱", "红烧肉"], [5, 1]),
    ("运动", ["羽毛球", "健身", "出汗"], [3]),
    ("reading", ["book", "novel", "library"], [7]),
    ("family abroad", ["Lisbon", "moving abroad", "visa"], [8]),
]


def main():
    tmp = tempfile.mkdtemp(prefix="pu-assoc-")
    root = os.path.join(tmp, "archive")
    archive.init_archive(root)
    try:
        hub = records.add_record(root, kind="entity", entity_type="person", title="妈妈", aliases=["我妈", "老妈"])["id"]
        background = []
        for n, (said, kind, title) in enumerate(BACKGROUND):
            turn = f"bg-{n}"
            receipts.preflight(root, said, turn_id=turn, tier="full")
            cid = capture.capture_text(root, said, turn)["capture_id"]
            background.append(records.add_record(root, kind=kind, title=title, capture_ids=[cid], entity_refs=[hub])["id"])
        for title, aliases, linked in DISTRACTOR_CARDS:
            records.add_record(root, kind="entity", entity_type="concept", title=title, aliases=aliases,
                               related_ids=[background[i] for i in linked])
        targets = []
        for n, (said, kind, title, concept, aliases, _query) in enumerate(CASES):
            turn = f"assoc-{n}"
            receipts.preflight(root, said, turn_id=turn, tier="full")
            cid = capture.capture_text(root, said, turn)["capture_id"]
            target = records.add_record(root, kind=kind, title=title, capture_ids=[cid], entity_refs=[hub])["id"]
            records.add_record(root, kind="entity", entity_type="concept", title=concept, aliases=aliases,
                               related_ids=[target])
            targets.append((target, cid))
        lexicon = open_recall(root).lexicon()
        hits = fused_hits = 0
        print(f"{'case':<4} {'assoc':>5} {'top':>4}  query -> target")
        for n, ((said, _kind, title, _concept, _aliases, query), (target, cid)) in enumerate(zip(CASES, targets)):
            t_title, t_body = record_text({"title": title})
            overlap = set(weighted_terms(query, lexicon)) & (set(weighted_terms(t_title, lexicon)) |
                                                            set(weighted_terms(said, lexicon)))
            if overlap:
                print(f"  case {n} is not zero-overlap: shares {sorted(overlap)}", file=sys.stderr)
            out = probe(root, query, maintenance=True, limit=10)
            assoc = [a["id"] for a in out["associations"][:6]]
            top = [r["id"] for r in out["top"]]
            in_assoc = target in assoc
            rank = top.index(target) + 1 if target in top else None
            hits += in_assoc
            fused_hits += rank is not None
            print(f"{n:<4} {'yes' if in_assoc else 'no':>5} {rank or '-':>4}  {query} -> {title}")
        print(f"\nassociation channel top 6: {hits}/{len(CASES)} targets; fused top 10: {fused_hits}/{len(CASES)}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
