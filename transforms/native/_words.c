/* The quality rules' word split (transforms/stages/filters/words.py) over a whole text, with the pure path's
 * tokens.
 *
 * `split_words(text, split_chunk, run_together, suffixes, period_after, abbreviations)` is
 * `tuple(chain.from_iterable(map(split_chunk, text.split())))` where the common shapes of chunk never reach
 * Python, split as split_chunk splits them:
 * - letters alone (`str.isalpha`): the chunk, or the tokens `run_together` lists for it ("cannot" -> can, not);
 * - ASCII digits alone: the chunk;
 * - letters, then one character of `suffixes` (a comma, a colon, a bracket...): the letters' tokens, the mark;
 * - two letters or more, then a period, the letter before it one of `period_after` (the lower-case letters after
 *   which a final period splits off) and the chunk none of `abbreviations`: the letters' tokens, the period;
 * - words of letters joined by single hyphens: each word (as it is) and each hyphen.
 * Every other chunk is `split_chunk(chunk)`, a tuple of str. `count_words(...)` counts those tokens and
 * `count_sentences(..., terminals)` their sentences as words.count_sentences does, making no str of a chunk of
 * letters or digits (none is a terminal) and splitting no chunk without a terminal in it (its tokens, pieces of
 * it, are none). The whitespace is `str.split()`'s and the letters
 * `str.isalpha()`'s (Python's own Py_UNICODE_ISSPACE and Py_UNICODE_ISALPHA). Leaving these out of Python is
 * what makes it faster: they are nine chunks in ten, and the pure path looks each up in split_chunk's cache, where
 * they push out the chunks that are costly to split.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* Where a chunk's tokens go: appended to `list`, or, for counting (`list` NULL), counted in `tokens`, and whether
 * each is one of `terminals` (str of one character; NULL: none is): `starts` counts the tokens that follow a
 * terminal and are none. */
typedef struct {
    PyObject *list;
    PyObject *terminals;
    Py_ssize_t tokens, starts;
    int after_terminal;
} Sink;

static void add_other(Sink *sink) {
    sink->starts += sink->after_terminal;
    sink->after_terminal = 0;
    sink->tokens++;
}

static int add(Sink *sink, PyObject *token) {
    if (sink->list != NULL)
        return PyList_Append(sink->list, token);
    int terminal = sink->terminals != NULL && PyUnicode_Check(token) && PyUnicode_GET_LENGTH(token) == 1
                   ? PySet_Contains(sink->terminals, token) : 0;
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
    PyObject *letters = PyUnicode_Substring(text, start, end);
    if (letters == NULL)
        return -1;
    PyObject *parts = PyDict_GetItemWithError(run_together, letters);  /* borrowed */
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
        } else if (Py_UNICODE_ISALPHA(character)) {
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

/* Whether text[start:end] holds a character of `terminals` (none is a letter or an ASCII digit): 1 or 0, -1 on an
 * error. */
static int has_terminal(PyObject *text, Py_ssize_t start, Py_ssize_t end, PyObject *terminals) {
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    for (Py_ssize_t position = start; position < end; position++) {
        Py_UCS4 character = PyUnicode_READ(kind, data, position);
        if (Py_UNICODE_ISALPHA(character) || (character >= '0' && character <= '9'))
            continue;
        PyObject *single = PyUnicode_FromOrdinal(character);
        if (single == NULL)
            return -1;
        int found = PySet_Contains(terminals, single);
        Py_DECREF(single);
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
        int terminal = has_terminal(text, start, end, sink->terminals);
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
            if (in_letters && Py_UNICODE_ISALPHA(character))
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
    Sink sink = {PyList_New(0), NULL, 0, 0, 0};
    if (sink.list == NULL)
        return NULL;
    PyObject *result = add_text(&sink, args[0], args + 1) < 0 ? NULL : PyList_AsTuple(sink.list);
    Py_DECREF(sink.list);
    return result;
}

static PyObject *count_sentences(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (!rules_given(args, nargs, 7, "count_sentences(text, split_chunk, run_together: dict, suffixes: set, "
                                     "period_after: set, abbreviations: set, terminals: set)"))
        return NULL;
    Sink sink = {NULL, args[6], 0, 0, 0};
    if (add_text(&sink, args[0], args + 1) < 0)
        return NULL;
    return PyLong_FromSsize_t(sink.tokens ? 1 + sink.starts : 0);
}

static PyObject *count_words(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (!rules_given(args, nargs, 6, "count_words(text, split_chunk, run_together: dict, suffixes: set, "
                                     "period_after: set, abbreviations: set)"))
        return NULL;
    Sink sink = {NULL, NULL, 0, 0, 0};
    if (add_text(&sink, args[0], args + 1) < 0)
        return NULL;
    return PyLong_FromSsize_t(sink.tokens);
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
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_words", NULL, -1, methods};

PyMODINIT_FUNC PyInit__words(void) {
    return PyModule_Create(&module);
}
