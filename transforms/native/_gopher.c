/* Gopher's n-gram repetition measures (transforms/stages/filters/gopher.py) over a page's words, with the
 * pure path's exact values.
 *
 * `NGrams(words)` reads the words (str) once: their code points joined without spaces, where each word starts,
 * the hash of every prefix of the joined text that ends at a word's start, and an id for each word (equal words,
 * equal ids). `top_characters(n)` is gopher.top_ngram_characters (n-grams as tuples of words: tuples of ids) and
 * `repeated_characters(n)` gopher.repeated_ngram_characters (n-grams as the words joined without spaces: slices of
 * the joined text, their hashes from the prefixes').
 *
 * A slice's hash is the polynomial sum of c[i] * B**i over its code points, modulo 2**64, taken from the
 * prefixes' as (prefix[end] - prefix[start]) * B**-start (B odd, so invertible), then mixed (splitmix64's
 * finaliser). Equal hashes are compared in full (lengths and code points, or ids), so a collision only costs a
 * comparison: the values never depend on the hash.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define B 0x9E3779B97F4A7C15ull

/* B**-1 modulo 2**64, set when the module is made. */
static uint64_t inverse_of_b;

typedef struct {
    PyObject_HEAD
    Py_UCS4 *text;       /* the words joined */
    Py_ssize_t *starts;  /* where each word starts in it, and its end: count + 1 */
    uint64_t *prefix;    /* the hash (unmixed) of text[:starts[k]]: count + 1 */
    uint64_t *inverse;   /* B**-starts[k]: count + 1 */
    Py_ssize_t *ids;     /* each word's id: the place of its first occurrence among the distinct words */
    Py_ssize_t count;    /* the words */
} NGrams;

static uint64_t mixed(uint64_t value) {
    value = (value ^ (value >> 30)) * 0xBF58476D1CE4E5B9ull;
    value = (value ^ (value >> 27)) * 0x94D049BB133111EBull;
    return value ^ (value >> 31);
}

/* The n words from `at` joined, and their hash. */
static Py_ssize_t joined_length(const NGrams *ngrams, Py_ssize_t at, Py_ssize_t n) {
    return ngrams->starts[at + n] - ngrams->starts[at];
}

static uint64_t joined_hash(const NGrams *ngrams, Py_ssize_t at, Py_ssize_t n) {
    uint64_t polynomial = (ngrams->prefix[at + n] - ngrams->prefix[at]) * ngrams->inverse[at];
    return mixed(polynomial + (uint64_t)joined_length(ngrams, at, n));
}

static int same_joined(const NGrams *ngrams, Py_ssize_t a, Py_ssize_t b, Py_ssize_t n) {
    Py_ssize_t length = joined_length(ngrams, a, n);
    return length == joined_length(ngrams, b, n)
        && memcmp(ngrams->text + ngrams->starts[a], ngrams->text + ngrams->starts[b], length * sizeof(Py_UCS4)) == 0;
}

/* The n words from `at` as a tuple of words (of ids), and its hash. */
static uint64_t tuple_hash(const NGrams *ngrams, Py_ssize_t at, Py_ssize_t n) {
    uint64_t polynomial = 0;
    for (Py_ssize_t k = 0; k < n; k++)
        polynomial = (polynomial + (uint64_t)ngrams->ids[at + k]) * B;
    return mixed(polynomial);
}

static int same_tuple(const NGrams *ngrams, Py_ssize_t a, Py_ssize_t b, Py_ssize_t n) {
    return memcmp(ngrams->ids + a, ngrams->ids + b, n * sizeof(Py_ssize_t)) == 0;
}

/* The distinct n-grams of a page, in the order first seen: an open-addressing table (linear probing) of them. */
typedef struct {
    Py_ssize_t *slot;    /* an entry + 1, 0 where empty */
    uint64_t mask;
    uint64_t *hash;      /* by entry */
    Py_ssize_t *first;   /* by entry: the position first seen at */
    Py_ssize_t *count;   /* by entry: how many times seen */
    Py_ssize_t entries;
} Table;

static void free_table(Table *table) {
    PyMem_Free(table->slot);
    PyMem_Free(table->hash);
    PyMem_Free(table->first);
    PyMem_Free(table->count);
}

/* A table for up to `positions` n-grams; -1 with an exception set on failure. */
static int make_table(Table *table, Py_ssize_t positions) {
    Py_ssize_t size = 8;
    while (size < 2 * positions)
        size *= 2;
    memset(table, 0, sizeof(Table));
    table->mask = (uint64_t)size - 1;
    table->slot = PyMem_Calloc(size, sizeof(Py_ssize_t));
    table->hash = PyMem_Malloc((positions + 1) * sizeof(uint64_t));
    table->first = PyMem_Malloc((positions + 1) * sizeof(Py_ssize_t));
    table->count = PyMem_Malloc((positions + 1) * sizeof(Py_ssize_t));
    if (table->slot == NULL || table->hash == NULL || table->first == NULL || table->count == NULL) {
        free_table(table);
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

typedef uint64_t (*HashOf)(const NGrams *, Py_ssize_t, Py_ssize_t);
typedef int (*Same)(const NGrams *, Py_ssize_t, Py_ssize_t, Py_ssize_t);

/* The entry of the n-gram at `at` (added, counted once more). */
static Py_ssize_t count_ngram(Table *table, const NGrams *ngrams, Py_ssize_t at, Py_ssize_t n, HashOf hash_of,
                              Same same) {
    uint64_t hash = hash_of(ngrams, at, n), place = hash & table->mask;
    for (;; place = (place + 1) & table->mask) {
        Py_ssize_t entry = table->slot[place] - 1;
        if (entry < 0) {
            entry = table->entries++;
            table->slot[place] = entry + 1;
            table->hash[entry] = hash;
            table->first[entry] = at;
            table->count[entry] = 1;
            return entry;
        }
        if (table->hash[entry] == hash && same(ngrams, table->first[entry], at, n)) {
            table->count[entry]++;
            return entry;
        }
    }
}

static void ngrams_dealloc(NGrams *self) {
    PyMem_Free(self->text);
    PyMem_Free(self->starts);
    PyMem_Free(self->prefix);
    PyMem_Free(self->inverse);
    PyMem_Free(self->ids);
    PyTypeObject *type = Py_TYPE(self);
    type->tp_free((PyObject *)self);
    Py_DECREF(type);
}

/* Reads `words` (a sequence of str) into `self`; -1 with an exception set on failure. */
static int read_words(NGrams *self, PyObject *words) {
    PyObject *sequence = PySequence_Fast(words, "NGrams takes a sequence of str");
    if (sequence == NULL)
        return -1;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(sequence), length = 0;
    PyObject **items = PySequence_Fast_ITEMS(sequence);
    for (Py_ssize_t k = 0; k < count; k++) {
        if (!PyUnicode_Check(items[k])) {
            Py_DECREF(sequence);
            PyErr_SetString(PyExc_TypeError, "NGrams takes a sequence of str");
            return -1;
        }
        length += PyUnicode_GET_LENGTH(items[k]);
    }
    self->count = count;
    self->text = PyMem_Malloc((length + 1) * sizeof(Py_UCS4));
    self->starts = PyMem_Malloc((count + 1) * sizeof(Py_ssize_t));
    self->prefix = PyMem_Malloc((count + 1) * sizeof(uint64_t));
    self->inverse = PyMem_Malloc((count + 1) * sizeof(uint64_t));
    self->ids = PyMem_Malloc((count + 1) * sizeof(Py_ssize_t));
    if (self->text == NULL || self->starts == NULL || self->prefix == NULL || self->inverse == NULL
        || self->ids == NULL) {
        Py_DECREF(sequence);
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t at = 0;
    uint64_t prefix = 0, power = 1, inverse = 1;
    for (Py_ssize_t k = 0; k < count; k++) {
        self->starts[k] = at;
        self->prefix[k] = prefix;
        self->inverse[k] = inverse;
        int kind = PyUnicode_KIND(items[k]);
        const void *data = PyUnicode_DATA(items[k]);
        for (Py_ssize_t i = 0; i < PyUnicode_GET_LENGTH(items[k]); i++, at++) {
            Py_UCS4 code = PyUnicode_READ(kind, data, i);
            self->text[at] = code;
            prefix += code * power;
            power *= B;
            inverse *= inverse_of_b;
        }
    }
    self->starts[count] = at;
    self->prefix[count] = prefix;
    self->inverse[count] = inverse;
    Py_DECREF(sequence);
    Table words_seen;
    if (make_table(&words_seen, count) < 0)
        return -1;
    for (Py_ssize_t k = 0; k < count; k++)
        self->ids[k] = count_ngram(&words_seen, self, k, 1, joined_hash, same_joined);
    free_table(&words_seen);
    return 0;
}

static PyObject *ngrams_new(PyTypeObject *type, PyObject *args, PyObject *keywords) {
    static char *names[] = {"words", NULL};
    PyObject *words;
    if (!PyArg_ParseTupleAndKeywords(args, keywords, "O:NGrams", names, &words))
        return NULL;
    NGrams *self = (NGrams *)type->tp_alloc(type, 0);
    if (self != NULL && read_words(self, words) < 0)
        Py_CLEAR(self);
    return (PyObject *)self;
}

/* n, checked; the n-grams' number in `positions`. -1 with an exception set when n is below 1. */
static int positions_of(const NGrams *self, PyObject *argument, Py_ssize_t *n, Py_ssize_t *positions) {
    *n = PyLong_AsSsize_t(argument);
    if (*n == -1 && PyErr_Occurred())
        return -1;
    if (*n < 1) {
        PyErr_SetString(PyExc_ValueError, "n must be 1 or more");
        return -1;
    }
    *positions = self->count < *n ? 0 : self->count - *n + 1;
    return 0;
}

static PyObject *top_characters(NGrams *self, PyObject *argument) {
    Py_ssize_t n, positions;
    Table table;
    if (positions_of(self, argument, &n, &positions) < 0 || make_table(&table, positions) < 0)
        return NULL;
    for (Py_ssize_t at = 0; at < positions; at++)
        count_ngram(&table, self, at, n, tuple_hash, same_tuple);
    /* The most common, the first seen of equal counts: its words' characters, the spaces between, times its count. */
    Py_ssize_t best = -1;
    for (Py_ssize_t entry = 0; entry < table.entries; entry++)
        if (best < 0 || table.count[entry] > table.count[best])
            best = entry;
    Py_ssize_t characters = best < 0 ? 0 : (joined_length(self, table.first[best], n) + n - 1) * table.count[best];
    free_table(&table);
    return PyLong_FromSsize_t(characters);
}

static PyObject *repeated_characters(NGrams *self, PyObject *argument) {
    Py_ssize_t n, positions;
    Table table;
    if (positions_of(self, argument, &n, &positions) < 0 || make_table(&table, positions) < 0)
        return NULL;
    Py_ssize_t *entry_at = PyMem_Malloc((positions + 1) * sizeof(Py_ssize_t));
    char *seen = PyMem_Calloc(positions + 1, 1);
    if (entry_at == NULL || seen == NULL) {
        PyMem_Free(entry_at);
        PyMem_Free(seen);
        free_table(&table);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t at = 0; at < positions; at++)
        entry_at[at] = count_ngram(&table, self, at, n, joined_hash, same_joined);
    /* An n-gram met before (and more than once in all) is a repeat: its characters, and the scan skips its n words,
     * so that overlapping repeats count once. */
    Py_ssize_t characters = 0;
    for (Py_ssize_t at = 0; at < positions;) {
        Py_ssize_t entry = entry_at[at];
        if (table.count[entry] > 1 && seen[entry]) {
            characters += joined_length(self, at, n);
            at += n;
        } else {
            seen[entry] = 1;
            at++;
        }
    }
    PyMem_Free(entry_at);
    PyMem_Free(seen);
    free_table(&table);
    return PyLong_FromSsize_t(characters);
}

static PyMethodDef ngrams_methods[] = {
    {"top_characters", (PyCFunction)top_characters, METH_O,
     "The characters of the most common n-gram (words joined by spaces) times its count; the first seen on a tie."},
    {"repeated_characters", (PyCFunction)repeated_characters, METH_O,
     "The characters of the n-grams (words joined without spaces) that repeat an earlier one, a repeat skipping its "
     "n words."},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot ngrams_slots[] = {
    {Py_tp_new, ngrams_new},
    {Py_tp_dealloc, ngrams_dealloc},
    {Py_tp_methods, ngrams_methods},
    {Py_tp_doc, "A page's words, for Gopher's n-gram repetition measures."},
    {0, NULL},
};

static PyType_Spec ngrams_spec = {"transforms.native._gopher.NGrams", sizeof(NGrams), 0, Py_TPFLAGS_DEFAULT,
                                  ngrams_slots};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_gopher", NULL, -1, NULL};

PyMODINIT_FUNC PyInit__gopher(void) {
    /* Newton's iteration for B's inverse: each step doubles the correct low bits (B * B == 1 modulo 8). */
    inverse_of_b = B;
    for (int step = 0; step < 5; step++)
        inverse_of_b *= 2 - B * inverse_of_b;
    PyObject *created = PyModule_Create(&module);
    if (created == NULL)
        return NULL;
    PyObject *type = PyType_FromSpec(&ngrams_spec);
    if (type == NULL || PyModule_AddObject(created, "NGrams", type) < 0) {
        Py_XDECREF(type);
        Py_DECREF(created);
        return NULL;
    }
    return created;
}
