"""The punctuation FineWeb-2's filters measure with: datatrove 0.10's (`datatrove/utils/text.py` of
huggingface/datatrove, Apache License 2.0), which `--quality fineweb2` applies where the other rule sets go by
Unicode's categories (`words.is_symbol`, `words.SENTENCE_TERMINALS`).

A word made only of `PUNCTUATION` is not counted as a word by Gopher's quality rules (the word count and the mean
word length), and a line ends a sentence for FineWeb's rule when its last character is one of
`TERMINAL_PUNCTUATION`. Both differ from Unicode's: `©`, `€`, `·`, `・` and the Arabic comma are words to datatrove,
the fullwidth digit one is punctuation, and it ends sentences with 82 characters more (Khmer's, Balinese's, ...).
"""

TERMINAL_PUNCTUATION = frozenset(
    '!.?։؝؞؟۔܀܁܂߹࠷࠹࠽࠾।॥၊။።፧፨᙮᜵᜶។៕៖៙៚᠃᠉᥄᥅᪨᪩᪪᪫᭚᭛᭞᭟᭽᭾᰻᰼᱾᱿‼‽⁇⁈⁉⸮⸼⹓⹔。꓿꘎꘏꛳꛷꡶꡷꣎꣏꤯꧈꧉꩝꩞꩟꫰꫱꯫﹒﹖﹗！．？｡𐩖𐩗𐽕𐽖𐽗𐽘𐽙𐾆𐾇𐾈𐾉𑁇𑁈𑂾𑂿𑃀𑃁𑅁𑅂'
    '𑅃𑇅𑇆𑇍𑇞𑇟𑈸𑈹𑈻𑈼𑊩𑑋𑑌𑗂𑗃𑗉𑗊𑗋𑗌𑗍𑗎𑗏𑗐𑗑𑗒𑗓𑗔𑗕𑗖𑗗𑙁𑙂𑜼𑜽𑜾𑥄𑥆𑩂𑩃𑪛𑪜𑱁𑱂𑻷𑻸\U00011f43\U00011f44𖩮𖩯𖫵𖬷𖬸𖭄𖺘𛲟𝪈')
# (With the control characters but tab and newline, and C1's.)
PUNCTUATION = TERMINAL_PUNCTUATION | frozenset(map(chr, (*range(0, 9), *range(11, 32), *range(127, 160)))) | frozenset(
    '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~«´»–—’“”„…∶━►、。〈〉《》「」【】！％（），．１：；？～')
