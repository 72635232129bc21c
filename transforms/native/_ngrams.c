/* Decontamination's words and n-gram hashes (transforms/stages/decontaminate.py) in one pass over a page.
 *
 * `words(text, classes, words_of)` and `ngram_hashes(text, n, classes, words_of)` read `text` (lower-cased
 * already) character by character. `classes` (an array of 65536 unsigned 32-bit values, one for each character
 * of the BMP) says what datatrove's normalisation makes of a character: a code point (the character, or the one
 * its marks come off), or DELETED, DIGIT, SPACE or PYTHON (see decontaminate.py's `_character_classes`). A word
 * ends at a SPACE; a DIGIT run is one `0`; a word holding a PYTHON character (or one beyond the BMP) is given as
 * a string to `words_of`, which returns its normalised words (bytes), as the pure path makes them.
 * `ngram_hashes` gives, as bytes of native uint64, the hash of every n-gram of the words: each word's FNV-1a
 * (64 bits, finished by splitmix64's mix), mixed as a polynomial (times MIX, plus the next word's hash).
 * `slots(hashes)` puts such hashes in an open-addressing table (linear probing); given one, `ngram_hashes` keeps
 * the hashes that it holds, in order: a page costs one probe an n-gram, whatever the number of benchmark items.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define DELETED 0x110000u
#define DIGIT 0x110001u
#define SPACE 0x110002u
#define PYTHON 0x110003u
#define CLASSES 0x10000
#define MIX 0x9E3779B97F4A7C15ull

/* The words of a page: their bytes one after another, and where each ends. */
typedef struct {
    char *bytes;
    Py_ssize_t used, room;
    Py_ssize_t *ends;
    Py_ssize_t count, slots;
} Words;

static int reserve(Words *words, Py_ssize_t more) {
    if (words->used + more > words->room) {
        Py_ssize_t room = (words->used + more) * 2;
        char *bytes = PyMem_Realloc(words->bytes, room);
        if (bytes == NULL)
            return -1;
        words->bytes = bytes;
        words->room = room;
    }
    return 0;
}

static int end_word(Words *words, Py_ssize_t start) {
    if (words->used == start)
        return 0;
    if (words->count == words->slots) {
        Py_ssize_t slots = words->slots * 2 + 64;
        Py_ssize_t *ends = PyMem_Realloc(words->ends, slots * sizeof(Py_ssize_t));
        if (ends == NULL)
            return -1;
        words->ends = ends;
        words->slots = slots;
    }
    words->ends[words->count++] = words->used;
    return 0;
}

/* Appends the UTF-8 of `code` (below 0x110000). */
static void put_utf8(Words *words, Py_UCS4 code) {
    char *out = words->bytes + words->used;
    if (code < 0x80) {
        out[0] = (char)code;
        words->used += 1;
    } else if (code < 0x800) {
        out[0] = (char)(0xC0 | (code >> 6));
        out[1] = (char)(0x80 | (code & 0x3F));
        words->used += 2;
    } else if (code < 0x10000) {
        out[0] = (char)(0xE0 | (code >> 12));
        out[1] = (char)(0x80 | ((code >> 6) & 0x3F));
        out[2] = (char)(0x80 | (code & 0x3F));
        words->used += 3;
    } else {
        out[0] = (char)(0xF0 | (code >> 18));
        out[1] = (char)(0x80 | ((code >> 12) & 0x3F));
        out[2] = (char)(0x80 | ((code >> 6) & 0x3F));
        out[3] = (char)(0x80 | (code & 0x3F));
        words->used += 4;
    }
}

/* The words `words_of` gives for text[start:end], appended. */
static int python_words(Words *words, PyObject *text, Py_ssize_t start, Py_ssize_t end, PyObject *words_of) {
    PyObject *piece = PyUnicode_Substring(text, start, end);
    if (piece == NULL)
        return -1;
    PyObject *found = PyObject_CallOneArg(words_of, piece);
    Py_DECREF(piece);
    if (found == NULL)
        return -1;
    PyObject *sequence = PySequence_Fast(found, "words_of must return a sequence of bytes");
    Py_DECREF(found);
    if (sequence == NULL)
        return -1;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(sequence); i++) {
        PyObject *word = PySequence_Fast_GET_ITEM(sequence, i);
        if (!PyBytes_Check(word)) {
            Py_DECREF(sequence);
            PyErr_SetString(PyExc_TypeError, "words_of must return bytes");
            return -1;
        }
        Py_ssize_t length = PyBytes_GET_SIZE(word), word_start = words->used;
        if (reserve(words, length) < 0) {
            Py_DECREF(sequence);
            return -1;
        }
        memcpy(words->bytes + words->used, PyBytes_AS_STRING(word), length);
        words->used += length;
        if (end_word(words, word_start) < 0) {
            Py_DECREF(sequence);
            return -1;
        }
    }
    Py_DECREF(sequence);
    return 0;
}

/* Fills `words` with the normalised words of `text`; -1 with an exception set on failure. */
static int split_words(Words *words, PyObject *text, Py_buffer *classes, PyObject *words_of) {
    if (classes->len != CLASSES * (Py_ssize_t)sizeof(uint32_t) || classes->itemsize != sizeof(uint32_t)) {
        PyErr_SetString(PyExc_ValueError, "classes must hold 65536 unsigned 32-bit values");
        return -1;
    }
    const uint32_t *class_of = (const uint32_t *)classes->buf;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t length = PyUnicode_GET_LENGTH(text), at = 0;
    while (at < length) {
        Py_UCS4 code = PyUnicode_READ(kind, data, at);
        if (code < CLASSES && class_of[code] == SPACE) {
            at++;
            continue;
        }
        /* A word: up to the next SPACE (or the end); at most 4 bytes of UTF-8 a character. */
        Py_ssize_t start = at, word_start = words->used;
        int python = 0;
        if (reserve(words, 4 * (length - at)) < 0)
            return -1;
        for (; at < length; at++) {
            code = PyUnicode_READ(kind, data, at);
            uint32_t class = code < CLASSES ? class_of[code] : PYTHON;
            if (class == SPACE)
                break;
            if (class == PYTHON)
                python = 1;
            else if (python || class == DELETED)
                continue;
            else if (class == DIGIT) {
                /* Only a digit run's 0 is a 0 byte: every other code point's UTF-8 has none. */
                if (words->used == word_start || words->bytes[words->used - 1] != '0')
                    words->bytes[words->used++] = '0';
            } else
                put_utf8(words, class);
        }
        if (python) {
            words->used = word_start;
            if (python_words(words, text, start, at, words_of) < 0)
                return -1;
        } else if (end_word(words, word_start) < 0)
            return -1;
    }
    return 0;
}

static void free_words(Words *words) {
    PyMem_Free(words->bytes);
    PyMem_Free(words->ends);
}

static PyObject *words(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *text, *words_of;
    Py_buffer classes;
    if (!PyArg_ParseTuple(args, "Uy*O:words", &text, &classes, &words_of))
        return NULL;
    Words found = {0};
    PyObject *result = NULL;
    if (split_words(&found, text, &classes, words_of) == 0 && (result = PyList_New(found.count)) != NULL) {
        for (Py_ssize_t i = 0, start = 0; i < found.count; start = found.ends[i++]) {
            PyObject *word = PyBytes_FromStringAndSize(found.bytes + start, found.ends[i] - start);
            if (word == NULL) {
                Py_CLEAR(result);
                break;
            }
            PyList_SET_ITEM(result, i, word);
        }
    }
    free_words(&found);
    PyBuffer_Release(&classes);
    return result;
}

static uint64_t word_hash(const unsigned char *bytes, Py_ssize_t length) {
    uint64_t value = 0xCBF29CE484222325ull;
    for (Py_ssize_t i = 0; i < length; i++)
        value = (value ^ bytes[i]) * 0x100000001B3ull;
    value = (value ^ (value >> 30)) * 0xBF58476D1CE4E5B9ull;
    value = (value ^ (value >> 27)) * 0x94D049BB133111EBull;
    return value ^ (value >> 31);
}

/* The hashes of the n-grams of `text`'s words, in a new PyMem array (NULL with an exception set); `count` their
 * number. */
static uint64_t *page_ngrams(PyObject *text, Py_ssize_t n, Py_buffer *classes, PyObject *words_of, Py_ssize_t *count) {
    if (n < 1) {
        PyErr_SetString(PyExc_ValueError, "n must be 1 or more");
        return NULL;
    }
    Words found = {0};
    uint64_t *hashes = NULL;
    if (split_words(&found, text, classes, words_of) == 0) {
        *count = found.count < n ? 0 : found.count - n + 1;
        hashes = PyMem_Malloc((found.count + 1) * sizeof(uint64_t));
        if (hashes == NULL)
            PyErr_NoMemory();
        else {
            for (Py_ssize_t i = 0, start = 0; i < found.count; start = found.ends[i++])
                hashes[i] = word_hash((const unsigned char *)found.bytes + start, found.ends[i] - start);
            /* The polynomial rolled along, in place (the n-gram at i reads the words at i and after only):
             * sum of hashes[i + k] * MIX**(n - 1 - k), modulo 2**64. */
            uint64_t top = 1, mixed = 0, first = 0;
            for (Py_ssize_t k = 1; k < n; k++)
                top *= MIX;
            for (Py_ssize_t i = 0; i < *count; i++) {
                if (i == 0)
                    for (Py_ssize_t k = 0; k < n; k++)
                        mixed = mixed * MIX + hashes[k];
                else
                    mixed = (mixed - first * top) * MIX + hashes[i + n - 1];
                first = hashes[i];
                hashes[i] = mixed;
            }
        }
    }
    free_words(&found);
    return hashes;
}

/* A slot table's place for `hash`, and the value that stands for it there (0 marks an empty slot). */
#define SLOT_OF(hash, mask) (((hash) * MIX) >> 32 & (mask))
#define STORED(hash) ((hash) ? (hash) : 1)

static PyObject *slots(PyObject *module, PyObject *args) {
    (void)module;
    Py_buffer keys;
    if (!PyArg_ParseTuple(args, "y*:slots", &keys))
        return NULL;
    Py_ssize_t count = keys.len / (Py_ssize_t)sizeof(uint64_t), size = 8;
    while (size < 2 * count)
        size *= 2;
    PyObject *result = PyBytes_FromStringAndSize(NULL, size * (Py_ssize_t)sizeof(uint64_t));
    if (result != NULL) {
        uint64_t *table = (uint64_t *)PyBytes_AS_STRING(result), mask = (uint64_t)size - 1;
        const uint64_t *key = (const uint64_t *)keys.buf;
        memset(table, 0, size * sizeof(uint64_t));
        for (Py_ssize_t i = 0; i < count; i++) {
            uint64_t at = SLOT_OF(key[i], mask);
            while (table[at] != 0 && table[at] != STORED(key[i]))
                at = (at + 1) & mask;
            table[at] = STORED(key[i]);
        }
    }
    PyBuffer_Release(&keys);
    return result;
}

/* Keeps, in order, the first `count` hashes that `table` holds; their number. */
static Py_ssize_t held(uint64_t *hashes, Py_ssize_t count, const uint64_t *slot, uint64_t mask) {
    Py_ssize_t kept = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        uint64_t at = SLOT_OF(hashes[i], mask);
        while (slot[at] != 0 && slot[at] != STORED(hashes[i]))
            at = (at + 1) & mask;
        if (slot[at] != 0)
            hashes[kept++] = hashes[i];
    }
    return kept;
}

static PyObject *ngram_hashes(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *text, *words_of, *result = NULL;
    Py_ssize_t n, count = 0;
    Py_buffer classes, table = {0};
    if (!PyArg_ParseTuple(args, "Uny*O|y*:ngram_hashes", &text, &n, &classes, &words_of, &table))
        return NULL;
    Py_ssize_t size = table.len / (Py_ssize_t)sizeof(uint64_t);
    if (table.buf != NULL && (size < 8 || (size & (size - 1)) != 0))
        PyErr_SetString(PyExc_ValueError, "the table must be one that slots() made");
    else {
        uint64_t *hashes = page_ngrams(text, n, &classes, words_of, &count);
        if (hashes != NULL) {
            if (table.buf != NULL)
                count = held(hashes, count, (const uint64_t *)table.buf, (uint64_t)size - 1);
            result = PyBytes_FromStringAndSize((const char *)hashes, count * (Py_ssize_t)sizeof(uint64_t));
            PyMem_Free(hashes);
        }
    }
    PyBuffer_Release(&classes);
    if (table.buf != NULL)
        PyBuffer_Release(&table);
    return result;
}

static PyMethodDef methods[] = {
    {"words", words, METH_VARARGS, "The normalised words (bytes) of a lower-cased text."},
    {"ngram_hashes", ngram_hashes, METH_VARARGS,
     "The hashes of a lower-cased text's n-grams (those a slots() table holds, given one), as native uint64 bytes."},
    {"slots", slots, METH_VARARGS, "A table of n-gram hashes (native uint64 bytes) for ngram_hashes."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_ngrams", NULL, -1, methods};

PyMODINIT_FUNC PyInit__ngrams(void) {
    PyObject *created = PyModule_Create(&module);
    if (created == NULL)
        return NULL;
    if (PyModule_AddIntConstant(created, "DELETED", DELETED) < 0 || PyModule_AddIntConstant(created, "DIGIT", DIGIT) < 0
        || PyModule_AddIntConstant(created, "SPACE", SPACE) < 0 || PyModule_AddIntConstant(created, "PYTHON", PYTHON) < 0) {
        Py_DECREF(created);
        return NULL;
    }
    return created;
}
