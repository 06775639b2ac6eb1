"""The inference edge cases every head, the tokenizer and the span builder are tried on (GUIDE.md)."""

EDGE_CASES = [
    "",
    "   ",
    "😀",
    "𠮷",
    "臺灣大學",
    "iPhone15发布于2023年",
    "ＡＢＣ１２３",
    "。，！？",
    "\u3000",
    "a\x00b\x07c",
    "混合 traditional 與简体 English",
    " ",
    "e\u0301",
    "👨\u200d👩\u200d👧",
    "\ufeff中文",
    "㍿",
    "倢릤勞슼",
    "天\x1c大",
]
