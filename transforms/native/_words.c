/* The quality rules' word split (transforms/stages/filters/words.py) over a whole text, with the pure path's
 * tokens.
 *
 * `split_words(text, split_chunk, run_together, suffixes, period_after, abbreviations)` is
 * `tuple(chain.from_iterable(map(split_chunk, text.split())))` where the common shapes of chunk never reach
 * Python, split as split_chunk splits them:
 * - letters alone (`str.isalpha`): the chunk, or the tokens `run_together` lists for it ("cannot" -> can, not),
 *   looked up only where one of its words could be (of their lengths and first letters: counting, no str is made
 *   of the others);
 * - ASCII digits alone: the chunk;
 * - letters, then one character of `suffixes` (a comma, a colon, a bracket...): the letters' tokens, the mark;
 * - two letters or more, then a period, the letter before it one of `period_after` (the lower-case letters after
 *   which a final period splits off) and the chunk none of `abbreviations`: the letters' tokens, the period;
 * - words of letters joined by single hyphens: each word (as it is) and each hyphen.
 * Every other chunk is `split_chunk(chunk)`, a tuple of str. `count_words(...)` counts those tokens and
 * `count_sentences(..., terminals)` their sentences as words.count_sentences does, making no str of a chunk of
 * letters or digits (none is a terminal) and splitting no chunk without a terminal in it (its tokens, pieces of
 * it, are none). The whitespace is `str.split()`'s and the letters `str.isalpha()`'s (Python's own
 * Py_UNICODE_ISSPACE and Py_UNICODE_ISALPHA, ASCII letters without a call). Leaving these out of Python is
 * what makes it faster: they are nine chunks in ten, and the pure path looks each up in split_chunk's cache, where
 * they push out the chunks that are costly to split.
 *
 * `c4_scan(text, longest, fewest, split, flags, remove_citations, marks, sentence_rules)` is C4's line scan
 * (transforms/stages/filters/c4.py, `python_scan`) over every line of a text, with its lines, its whitespace, its
 * lower case and its searches Python's own (`str.splitlines`, `str.strip`, `str.split`, `str.lower`, `in`); a line
 * with a `[` goes through `remove_citations` (c4.CITATION's substitution), and the sentences of a line kept are
 * counted as count_sentences counts them.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

/* str.isalpha() of a character, ASCII without a call: most characters of most pages. */
static inline int is_letter(Py_UCS4 character) {
    return character < 128 ? (unsigned)((character | 32) - 'a') < 26 : Py_UNICODE_ISALPHA(character);
}

/* Whether `haystack` holds `needle` (memmem, which not every C library has). */
static int holds(const char *haystack, size_t length, const char *needle, size_t size) {
    if (size == 0)
        return 1;
    for (const char *at = haystack; length >= size; ) {
        const char *first = memchr(at, needle[0], length - size + 1);
        if (first == NULL)
            return 0;
        if (memcmp(first, needle, size) == 0)
            return 1;
        length -= (size_t)(first - at) + 1;
        at = first + 1;
    }
    return 0;
}

/* Where a chunk's tokens go: appended to `list`, or, for counting (`list` NULL), counted in `tokens`, and whether
 * each is one of `terminals` (str of one character; NULL: none is; `ascii_terminals` marks those in ASCII):
 * `starts` counts the tokens that follow a terminal and are none. */
typedef struct {
    PyObject *list;
    PyObject *terminals;
    Py_ssize_t tokens, starts;
    int after_terminal;
    unsigned char ascii_terminals[128];
    /* What run_together's words can be (`together`): their lengths, and their first characters (ASCII ones marked,
     * `together_first[0]`: one is not ASCII); a chunk of letters that is none is not looked up. */
    Py_ssize_t together_shortest, together_longest;
    unsigned char together_first[128];
} Sink;

/* Marks in the sink what the words of `run_together` (a dict of str) can be. */
static void together(Sink *sink, PyObject *run_together) {
    PyObject *word, *parts;
    Py_ssize_t at = 0;
    sink->together_shortest = PY_SSIZE_T_MAX;
    sink->together_longest = 0;
    memset(sink->together_first, 0, sizeof sink->together_first);
    while (PyDict_Next(run_together, &at, &word, &parts)) {
        if (!PyUnicode_Check(word) || PyUnicode_GET_LENGTH(word) == 0)
            continue;  /* never a chunk of letters */
        Py_ssize_t length = PyUnicode_GET_LENGTH(word);
        Py_UCS4 first = PyUnicode_READ_CHAR(word, 0);
        sink->together_first[first < 128 ? first : 0] = 1;
        sink->together_shortest = Py_MIN(sink->together_shortest, length);
        sink->together_longest = Py_MAX(sink->together_longest, length);
    }
}

/* Whether text[start:end] could be one of run_together's words (`together`). */
static int maybe_together(Sink *sink, PyObject *text, Py_ssize_t start, Py_ssize_t end) {
    if (end - start < sink->together_shortest || end - start > sink->together_longest)
        return 0;
    Py_UCS4 first = PyUnicode_READ_CHAR(text, start);
    return sink->together_first[first < 128 ? first : 0];
}

/* A sink that counts, with `terminals` (a set of str, or NULL), its ASCII ones marked; -1 on an error. It looks
 * no chunk up in run_together until `together` marks what its words can be: a sentence count never does, as a
 * chunk of letters is no terminal and adds at least one token, split or not. */
static int counting(Sink *sink, PyObject *terminals) {
    *sink = (Sink){NULL, terminals, 0, 0, 0, {0}, 0, 0, {0}};
    if (terminals == NULL)
        return 0;
    PyObject *iterator = PyObject_GetIter(terminals), *item;
    if (iterator == NULL)
        return -1;
    while ((item = PyIter_Next(iterator)) != NULL) {
        if (PyUnicode_Check(item) && PyUnicode_GET_LENGTH(item) == 1 && PyUnicode_READ_CHAR(item, 0) < 128)
            sink->ascii_terminals[PyUnicode_READ_CHAR(item, 0)] = 1;
        Py_DECREF(item);
    }
    Py_DECREF(iterator);
    return PyErr_Occurred() ? -1 : 0;
}

/* Whether `character` is one of the sink's terminals: 1 or 0, -1 on an error. */
static int is_terminal(Sink *sink, Py_UCS4 character) {
    if (character < 128)
        return sink->ascii_terminals[character];
    PyObject *single = PyUnicode_FromOrdinal(character);
    if (single == NULL)
        return -1;
    int found = PySet_Contains(sink->terminals, single);
    Py_DECREF(single);
    return found;
}

static void add_other(Sink *sink) {
    sink->starts += sink->after_terminal;
    sink->after_terminal = 0;
    sink->tokens++;
}

static int add(Sink *sink, PyObject *token) {
    if (sink->list != NULL)
        return PyList_Append(sink->list, token);
    int terminal = sink->terminals != NULL && PyUnicode_Check(token) && PyUnicode_GET_LENGTH(token) == 1
                   ? is_terminal(sink, PyUnicode_READ_CHAR(token, 0)) : 0;
    if (terminal < 0)
        return -1;
    if (terminal) {
        sink->after_terminal = 1;
        sink->tokens++;
    } else {
        add_other(sink);
    }
    return 0;
}

static int add_all(Sink *sink, PyObject *more) {
    if (!PyList_CheckExact(more) && !PyTuple_CheckExact(more)) {
        PyErr_SetString(PyExc_TypeError, "split_chunk and run_together give a tuple or a list of tokens");
        return -1;
    }
    Py_ssize_t count = PySequence_Fast_GET_SIZE(more);
    PyObject **items = PySequence_Fast_ITEMS(more);
    for (Py_ssize_t k = 0; k < count; k++)
        if (add(sink, items[k]) < 0)
            return -1;
    return 0;
}

/* Adds the tokens of text[start:end], letters alone: run_together's for it, or itself. (Counting sentences, the
 * tokens need not be made: no letter is a terminal.) */
static int add_letters(Sink *sink, PyObject *text, Py_ssize_t start, Py_ssize_t end, PyObject *run_together) {
    if (sink->list == NULL && sink->terminals != NULL) {
        add_other(sink);
        return 0;
    }
    int could_be_together = maybe_together(sink, text, start, end);
    if (sink->list == NULL && !could_be_together) {
        add_other(sink);
        return 0;
    }
    PyObject *letters = PyUnicode_Substring(text, start, end);
    if (letters == NULL)
        return -1;
    PyObject *parts = could_be_together ? PyDict_GetItemWithError(run_together, letters) : NULL;  /* borrowed */
    int status = parts != NULL ? add_all(sink, parts) : PyErr_Occurred() ? -1 : add(sink, letters);
    Py_DECREF(letters);
    return status;
}

/* Whether text[start:end], letters then one mark, splits into the letters and the mark as split_chunk splits it:
 * 1 or 0, -1 on an error. */
static int mark_splits(PyObject *text, Py_ssize_t start, Py_ssize_t end, PyObject *mark, PyObject *const *rules) {
    PyObject *suffixes = rules[2], *period_after = rules[3], *abbreviations = rules[4];
    int splits = PySet_Contains(suffixes, mark);
    if (splits != 0 || end - start < 3 || PyUnicode_READ_CHAR(mark, 0) != '.')
        return splits;
    PyObject *last = PyUnicode_Substring(text, end - 2, end - 1);
    if (last == NULL)
        return -1;
    splits = PySet_Contains(period_after, last);
    Py_DECREF(last);
    if (splits != 1)
        return splits;
    PyObject *chunk = PyUnicode_Substring(text, start, end);
    if (chunk == NULL)
        return -1;
    splits = PySet_Contains(abbreviations, chunk);
    Py_DECREF(chunk);
    return splits < 0 ? -1 : !splits;
}

/* Whether text[start:end] is words of letters joined by single hyphens (`well-known`), which split_chunk splits at
 * each hyphen (its infix rule), the words as they are. */
static int hyphenated(PyObject *text, Py_ssize_t start, Py_ssize_t end) {
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    int after_letter = 0, hyphens = 0;
    for (Py_ssize_t position = start; position < end; position++) {
        Py_UCS4 character = PyUnicode_READ(kind, data, position);
        if (character == '-') {
            if (!after_letter)
                return 0;
            after_letter = 0;
            hyphens++;
        } else if (is_letter(character)) {
            after_letter = 1;
        } else {
            return 0;
        }
    }
    return hyphens > 0 && after_letter;
}

/* Adds the tokens of a hyphenated chunk: each word and each hyphen. */
static int add_hyphenated(Sink *sink, PyObject *text, Py_ssize_t start, Py_ssize_t end) {
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t word = start;
    for (Py_ssize_t position = start; position <= end; position++) {
        if (position < end && PyUnicode_READ(kind, data, position) != '-')
            continue;
        for (Py_ssize_t k = 0; k < 2 && (k == 0 || position < end); k++) {
            if (sink->list == NULL) {
                add_other(sink);
                continue;
            }
            PyObject *token = k == 0 ? PyUnicode_Substring(text, word, position)
                                     : PyUnicode_Substring(text, position, position + 1);
            int status = token == NULL ? -1 : add(sink, token);
            Py_XDECREF(token);
            if (status < 0)
                return -1;
        }
        word = position + 1;
    }
    return 0;
}

/* Whether text[start:end] holds one of the sink's terminals (none is a letter or an ASCII digit): 1 or 0, -1 on an
 * error. */
static int has_terminal(Sink *sink, PyObject *text, Py_ssize_t start, Py_ssize_t end) {
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    for (Py_ssize_t position = start; position < end; position++) {
        Py_UCS4 character = PyUnicode_READ(kind, data, position);
        if ((character >= '0' && character <= '9') || is_letter(character))
            continue;
        int found = is_terminal(sink, character);
        if (found != 0)
            return found;
    }
    return 0;
}

/* Adds the tokens of text[start:end], a chunk: `letters` of its characters from the start are letters, `digits`
 * whether all are ASCII digits. */
static int add_chunk(Sink *sink, PyObject *text, Py_ssize_t start, Py_ssize_t end, Py_ssize_t letters, int digits,
                     PyObject *const *rules) {
    PyObject *split_chunk = rules[0], *run_together = rules[1];
    if (letters == end - start)
        return add_letters(sink, text, start, end, run_together);
    if (digits && sink->list == NULL) {
        add_other(sink);
        return 0;
    }
    if (sink->list == NULL && sink->terminals != NULL) {
        /* Counting sentences: a token is a piece of its chunk, so a chunk without a terminal has none to count. */
        int terminal = has_terminal(sink, text, start, end);
        if (terminal < 0)
            return -1;
        if (!terminal) {
            add_other(sink);
            return 0;
        }
    }
    if (letters >= 1 && letters == end - start - 1) {
        PyObject *mark = PyUnicode_Substring(text, end - 1, end);
        if (mark == NULL)
            return -1;
        int splits = mark_splits(text, start, end, mark, rules);
        int status = splits < 0 ? -1 : 0;
        if (splits == 1) {
            status = add_letters(sink, text, start, end - 1, run_together);
            if (status == 0)
                status = add(sink, mark);
        }
        Py_DECREF(mark);
        if (splits != 0)
            return status;
    }
    if (letters >= 1 && hyphenated(text, start, end))
        return add_hyphenated(sink, text, start, end);
    PyObject *chunk = PyUnicode_Substring(text, start, end);
    if (chunk == NULL)
        return -1;
    int status;
    if (digits) {
        status = add(sink, chunk);
    } else {
        PyObject *parts = PyObject_CallOneArg(split_chunk, chunk);
        status = parts == NULL ? -1 : add_all(sink, parts);
        Py_XDECREF(parts);
    }
    Py_DECREF(chunk);
    return status;
}

/* Adds the tokens of every whitespace-separated chunk of `text`. */
static int add_text(Sink *sink, PyObject *text, PyObject *const *rules) {
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    Py_ssize_t position = 0;
    while (position < length) {
        while (position < length && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, position)))
            position++;
        if (position == length)
            break;
        Py_ssize_t start = position, letters = 0;
        int in_letters = 1, digits = 1;
        for (; position < length; position++) {
            Py_UCS4 character = PyUnicode_READ(kind, data, position);
            if (Py_UNICODE_ISSPACE(character))
                break;
            if (in_letters && is_letter(character))
                letters++;
            else
                in_letters = 0;
            if (character < '0' || character > '9')
                digits = 0;
        }
        if (add_chunk(sink, text, start, position, letters, digits, rules) < 0)
            return -1;
    }
    return 0;
}

static int rules_given(PyObject *const *args, Py_ssize_t nargs, Py_ssize_t expected, const char *usage) {
    if (nargs != expected || !PyUnicode_Check(args[0]) || !PyDict_Check(args[2]) || !PyAnySet_Check(args[3]) ||
        !PyAnySet_Check(args[4]) || !PyAnySet_Check(args[5]) || (expected == 7 && !PyAnySet_Check(args[6]))) {
        PyErr_SetString(PyExc_TypeError, usage);
        return 0;
    }
    return 1;
}

static PyObject *split_words(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (!rules_given(args, nargs, 6, "split_words(text, split_chunk, run_together: dict, suffixes: set, "
                                     "period_after: set, abbreviations: set)"))
        return NULL;
    Sink sink = {PyList_New(0), NULL, 0, 0, 0, {0}, 0, 0, {0}};
    if (sink.list == NULL)
        return NULL;
    together(&sink, args[2]);
    PyObject *result = add_text(&sink, args[0], args + 1) < 0 ? NULL : PyList_AsTuple(sink.list);
    Py_DECREF(sink.list);
    return result;
}

static PyObject *count_sentences(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (!rules_given(args, nargs, 7, "count_sentences(text, split_chunk, run_together: dict, suffixes: set, "
                                     "period_after: set, abbreviations: set, terminals: set)"))
        return NULL;
    Sink sink;
    if (counting(&sink, args[6]) < 0 || add_text(&sink, args[0], args + 1) < 0)
        return NULL;
    return PyLong_FromSsize_t(sink.tokens ? 1 + sink.starts : 0);
}

static PyObject *count_words(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (!rules_given(args, nargs, 6, "count_words(text, split_chunk, run_together: dict, suffixes: set, "
                                     "period_after: set, abbreviations: set)"))
        return NULL;
    Sink sink;
    if (counting(&sink, NULL) < 0)
        return NULL;
    together(&sink, args[2]);
    if (add_text(&sink, args[0], args + 1) < 0)
        return NULL;
    return PyLong_FromSsize_t(sink.tokens);
}

/* Py_UNICODE_ISLINEBREAK without a call for ASCII (str.splitlines' breaks there: \n \v \f \r \x1c \x1d \x1e). */
static inline int is_line_break(Py_UCS4 character) {
    if (character < 128)
        return (character >= '\n' && character <= '\r') || (character >= 0x1c && character <= 0x1e);
    return Py_UNICODE_ISLINEBREAK(character);
}

/* The whitespace-separated words of text[start:end], counted up to `most`, and the length of the longest. */
static Py_ssize_t count_chunks(int kind, const void *data, Py_ssize_t start, Py_ssize_t end, Py_ssize_t most,
                               Py_ssize_t *longest) {
    Py_ssize_t chunks = 0, position = start;
    *longest = 0;
    while (position < end && chunks < most) {
        while (position < end && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, position)))
            position++;
        if (position == end)
            break;
        Py_ssize_t chunk_start = position;
        while (position < end && !Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, position)))
            position++;
        chunks++;
        if (position - chunk_start > *longest)
            *longest = position - chunk_start;
    }
    return chunks;
}

/* A line's lower case as bytes, to look for ASCII phrases in: what str.lower() gives, each character that is not
 * ASCII as 0x80 (no phrase holds it). Two characters outside ASCII lower to one inside (tests/test_c4_native.py
 * checks that no other does): KELVIN SIGN to "k", and LATIN CAPITAL LETTER I WITH DOT ABOVE to "i" and a combining
 * dot. */
typedef struct {
    char *bytes, small[1024];
    Py_ssize_t length;
} Lowered;

static int lower_line(Lowered *lowered, PyObject *line) {
    Py_ssize_t length = PyUnicode_GET_LENGTH(line);
    int ascii = PyUnicode_IS_ASCII(line);
    size_t size = (size_t)length * (ascii ? 1 : 2);
    lowered->bytes = size <= sizeof(lowered->small) ? lowered->small : PyMem_Malloc(size);
    if (lowered->bytes == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    char *out = lowered->bytes;
    if (ascii) {
        const Py_UCS1 *characters = PyUnicode_1BYTE_DATA(line);
        for (Py_ssize_t index = 0; index < length; index++)
            *out++ = (char)Py_TOLOWER(characters[index]);
    } else {
        int kind = PyUnicode_KIND(line);
        const void *data = PyUnicode_DATA(line);
        for (Py_ssize_t index = 0; index < length; index++) {
            Py_UCS4 character = PyUnicode_READ(kind, data, index);
            if (character < 128) {
                *out++ = (char)Py_TOLOWER(character);
            } else if (character == 0x212A) {
                *out++ = 'k';
            } else if (character == 0x130) {
                *out++ = 'i';
                *out++ = (char)0x80;
            } else {
                *out++ = (char)0x80;
            }
        }
    }
    lowered->length = out - lowered->bytes;
    return 0;
}

static void free_lowered(Lowered *lowered) {
    if (lowered->bytes != lowered->small)
        PyMem_Free(lowered->bytes);
}

/* Whether the lower case holds `phrase` (ASCII): 1 or 0, -1 on an error. */
static int found_in(Lowered *lowered, PyObject *phrase) {
    Py_ssize_t size;
    const char *needle = PyUnicode_AsUTF8AndSize(phrase, &size);
    if (needle == NULL)
        return -1;
    return holds(lowered->bytes, (size_t)lowered->length, needle, (size_t)size);
}

/* Whether the lower case holds one of `phrases` (a tuple of ASCII str). */
static int found_any(Lowered *lowered, PyObject *phrases) {
    int found = 0;
    for (Py_ssize_t index = 0; !found && index < PyTuple_GET_SIZE(phrases); index++)
        found = found_in(lowered, PyTuple_GET_ITEM(phrases, index));
    return found;
}

/* Whether `line` ends as C4 wants a line to: with a mark of `ends` (a tuple of str) and not with `ellipsis`. */
static int well_ended(PyObject *line, PyObject *ends, PyObject *ellipsis) {
    Py_ssize_t length = PyUnicode_GET_LENGTH(line);
    int ended = 0;
    for (Py_ssize_t index = 0; index < PyTuple_GET_SIZE(ends) && !ended; index++) {
        Py_ssize_t match = PyUnicode_Tailmatch(line, PyTuple_GET_ITEM(ends, index), 0, length, 1);
        if (match < 0)
            return -1;
        ended = (int)match;
    }
    if (!ended)
        return 0;
    Py_ssize_t elided = PyUnicode_Tailmatch(line, ellipsis, 0, length, 1);
    return elided < 0 ? -1 : !elided;
}

/* The flags of c4_scan. */
enum { TERMINAL_PUNCTUATION = 1, UNTIL_PAGE_RULE = 2, SENTENCES = 4 };
/* c4_scan's line rules, as c4.LINE_RULES orders them. */
enum { LONG_WORD, NO_END, FEW_WORDS, JAVASCRIPT, POLICY, LINE_RULES };

typedef struct {
    PyObject *kept, *removed[LINE_RULES];
    Py_ssize_t sentences, lorem_ipsum, curly_bracket;
} C4Scan;

static int remove_line(C4Scan *scan, int rule, Py_ssize_t index) {
    PyObject *number = PyLong_FromSsize_t(index);
    if (number == NULL)
        return -1;
    int status = PyList_Append(scan->removed[rule], number);
    Py_DECREF(number);
    return status;
}

/* Scans `line` (stripped, its citations removed), the text's line `index`: 1 when a page rule ends the scan there,
 * 0 to go on, -1 on an error. `marks`: (lorem ipsum, javascript, the policy phrases, the line ends, the ellipsis,
 * words one of which every policy phrase holds). */
static int scan_line(C4Scan *scan, PyObject *line, Py_ssize_t index, int few_words, int flags, PyObject *marks,
                     PyObject *const *rules, const Sink *counter) {
    PyObject *lorem = PyTuple_GET_ITEM(marks, 0), *javascript = PyTuple_GET_ITEM(marks, 1);
    PyObject *phrases = PyTuple_GET_ITEM(marks, 2), *ends = PyTuple_GET_ITEM(marks, 3);
    Py_ssize_t length = PyUnicode_GET_LENGTH(line);
    if (flags & TERMINAL_PUNCTUATION) {
        int ended = well_ended(line, ends, PyTuple_GET_ITEM(marks, 4));
        if (ended <= 0)
            return ended < 0 ? -1 : remove_line(scan, NO_END, index);
    }
    if (few_words)
        return remove_line(scan, FEW_WORDS, index);
    Lowered lowered;
    if (lower_line(&lowered, line) < 0)
        return -1;
    int status = found_in(&lowered, lorem);
    if (status == 1) {
        scan->lorem_ipsum = scan->lorem_ipsum ? scan->lorem_ipsum : index + 1;
        status = (flags & UNTIL_PAGE_RULE) ? 1 : 0;
        if (status) {
            free_lowered(&lowered);
            return 1;
        }
    }
    if (status == 0 && (status = found_in(&lowered, javascript)) == 1)
        status = remove_line(scan, JAVASCRIPT, index) < 0 ? -1 : 2;
    if (status == 0 && PyUnicode_FindChar(line, '{', 0, length, 1) >= 0) {
        scan->curly_bracket = scan->curly_bracket ? scan->curly_bracket : index + 1;
        if (flags & UNTIL_PAGE_RULE) {
            free_lowered(&lowered);
            return 1;
        }
    }
    /* (The policy phrases only where a word all of them hold one of is.) */
    if (status == 0 && (status = found_any(&lowered, PyTuple_GET_ITEM(marks, 5))) == 1 &&
        (status = found_any(&lowered, phrases)) == 1)
        status = remove_line(scan, POLICY, index) < 0 ? -1 : 2;
    free_lowered(&lowered);
    if (status != 0)
        return status < 0 ? -1 : 0;
    if (flags & SENTENCES) {
        Sink sink = *counter;
        if (add_text(&sink, line, rules) < 0)
            return -1;
        scan->sentences += sink.tokens ? 1 + sink.starts : 0;
    }
    return PyList_Append(scan->kept, line);
}

static PyObject *c4_scan(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 8 || !PyUnicode_Check(args[0]) || !PyTuple_Check(args[6]) || PyTuple_GET_SIZE(args[6]) != 6 ||
        !PyTuple_Check(PyTuple_GET_ITEM(args[6], 2)) || !PyTuple_Check(PyTuple_GET_ITEM(args[6], 3)) ||
        !PyTuple_Check(PyTuple_GET_ITEM(args[6], 5)) ||
        !PyTuple_Check(args[7]) || PyTuple_GET_SIZE(args[7]) != 6) {
        PyErr_SetString(PyExc_TypeError, "c4_scan(text, longest: float, fewest: float, split: int, flags: int, "
                                         "remove_citations, marks: tuple (6), sentence_rules: tuple (6))");
        return NULL;
    }
    PyObject *text = args[0], *remove_citations = args[5], *marks = args[6];
    double longest = PyFloat_AsDouble(args[1]), fewest = PyFloat_AsDouble(args[2]);
    Py_ssize_t split = PyLong_AsSsize_t(args[3]);
    long flags = PyLong_AsLong(args[4]);
    if (PyErr_Occurred())
        return NULL;
    PyObject *const *rules = &PyTuple_GET_ITEM(args[7], 0);
    Sink counter;
    if (counting(&counter, PyTuple_GET_ITEM(args[7], 5)) < 0)
        return NULL;
    C4Scan scan = {PyList_New(0), {NULL}, 0, 0, 0};
    PyObject *result = NULL;
    if (scan.kept == NULL)
        goto done;
    for (int rule = 0; rule < LINE_RULES; rule++)
        if ((scan.removed[rule] = PyList_New(0)) == NULL)
            goto done;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t length = PyUnicode_GET_LENGTH(text), position = 0, index = 0;
    for (; position < length; index++) {
        /* The line (str.splitlines: "\r\n" is one break), stripped. */
        Py_ssize_t start = position;
        while (position < length && !is_line_break(PyUnicode_READ(kind, data, position)))
            position++;
        Py_ssize_t end = position;
        if (position < length && PyUnicode_READ(kind, data, position++) == '\r' && position < length &&
            PyUnicode_READ(kind, data, position) == '\n')
            position++;
        while (start < end && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, start)))
            start++;
        while (end > start && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, end - 1)))
            end--;
        Py_ssize_t longest_word;
        if ((double)(end - start) > longest) {
            count_chunks(kind, data, start, end, PY_SSIZE_T_MAX, &longest_word);
            if (start == end) {
                PyErr_SetString(PyExc_ValueError, "max() arg is an empty sequence");
                goto done;
            }
            if ((double)longest_word > longest) {
                if (remove_line(&scan, LONG_WORD, index) < 0)
                    goto done;
                continue;
            }
        }
        /* (str.split(None, split) gives split + 1 parts at most.) */
        int few_words = (double)count_chunks(kind, data, start, end, split + 1, &longest_word) < fewest;
        if (few_words && !(flags & TERMINAL_PUNCTUATION)) {
            /* Removed for its words whatever its citations: no str is made of it. */
            if (remove_line(&scan, FEW_WORDS, index) < 0)
                goto done;
            continue;
        }
        PyObject *line = PyUnicode_Substring(text, start, end);
        if (line != NULL && PyUnicode_FindChar(line, '[', 0, PyUnicode_GET_LENGTH(line), 1) >= 0) {
            PyObject *cited = line;
            line = PyObject_CallOneArg(remove_citations, cited);
            Py_DECREF(cited);
            if (line != NULL && !PyUnicode_Check(line)) {
                Py_CLEAR(line);
                PyErr_SetString(PyExc_TypeError, "remove_citations gives a str");
            }
        }
        if (line == NULL)
            goto done;
        int status = scan_line(&scan, line, index, few_words, (int)flags, marks, rules, &counter);
        Py_DECREF(line);
        if (status < 0)
            goto done;
        if (status == 1)
            break;
    }
    result = Py_BuildValue("(O(OOOOO)nnn)", scan.kept, scan.removed[LONG_WORD], scan.removed[NO_END],
                           scan.removed[FEW_WORDS], scan.removed[JAVASCRIPT], scan.removed[POLICY], scan.sentences,
                           scan.lorem_ipsum, scan.curly_bracket);
done:
    Py_XDECREF(scan.kept);
    for (int rule = 0; rule < LINE_RULES; rule++)
        Py_XDECREF(scan.removed[rule]);
    return result;
}

static PyMethodDef methods[] = {
    {"split_words", (PyCFunction)(void (*)(void))split_words, METH_FASTCALL,
     "split_words(text, split_chunk, run_together, suffixes, period_after, abbreviations): the tokens of text's "
     "whitespace-separated chunks: the common shapes here, any other split_chunk's."},
    {"count_words", (PyCFunction)(void (*)(void))count_words, METH_FASTCALL,
     "count_words(text, split_chunk, run_together, suffixes, period_after, abbreviations): len(split_words(...))."},
    {"count_sentences", (PyCFunction)(void (*)(void))count_sentences, METH_FASTCALL,
     "count_sentences(text, split_chunk, run_together, suffixes, period_after, abbreviations, terminals): the "
     "sentences of split_words' tokens: 1 and one for each token after a terminal that is none, 0 without tokens."},
    {"c4_scan", (PyCFunction)(void (*)(void))c4_scan, METH_FASTCALL,
     "c4_scan(text, longest, fewest, split, flags, remove_citations, marks, sentence_rules): C4's line scan "
     "(c4.python_scan): (lines kept, the lines each line rule removes, sentences kept, the lines the page rules are "
     "first met on)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_words", NULL, -1, methods};

PyMODINIT_FUNC PyInit__words(void) {
    return PyModule_Create(&module);
}
