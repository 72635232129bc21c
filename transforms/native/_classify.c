/* A fastText supervised classifier's probabilities for one line (transforms/stages/quality_model.py), as fastText's
 * own predict gives them, for the models it covers: softmax loss, no subword n-grams, not quantized, not pruned.
 *
 * `word_table(words, ends)` puts a model's dictionary (its entries' bytes one after another, and where each ends)
 * in an open-addressing table by fastText's hash, as fastText's `find` does. `probabilities(line, words, ends,
 * table, nwords, bucket, word_ngrams, inputs, outputs, dim)` reads `line` as fastText's getLine reads a line (words
 * split on its separators, `</s>` at a line feed, the line ending at a `</s>`, a word of the dictionary its row, a label skipped, the hashes of
 * every word not a label mixed into word n-grams, each its row in the bucket) and gives the probability of each
 * label (in the dictionary's order), or an empty tuple for a line without a row, as fastText's predict does:
 * the rows' mean (float, added in order, times 1.0 / count), each label's dot product (float, in order), the
 * softmax (exp in double, the sum in float), then exp(log(p + 1e-5)) as fastText returns a probability. The rows
 * are prefetched ahead of the sum: a model's bucket is far larger than a cache. Compiled without contracting a
 * product and a sum into one (-ffp-contract=off), as fastText's own arithmetic is.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define EMPTY (-1)
#define END_OF_LINE "</s>"
#define LABEL_PREFIX "__label__"
#define NGRAM_MIX 116049371ull
/* Rows prefetched ahead of the one added. */
#define AHEAD 8

static uint32_t fasttext_hash(const char *word, Py_ssize_t length) {
    uint32_t value = 2166136261u;
    for (Py_ssize_t i = 0; i < length; i++) {
        value ^= (uint32_t)(int32_t)(int8_t)word[i];
        value *= 16777619u;
    }
    return value;
}

static PyObject *word_table(PyObject *module, PyObject *args) {
    (void)module;
    Py_buffer words, ends;
    if (!PyArg_ParseTuple(args, "y*y*:word_table", &words, &ends))
        return NULL;
    const int64_t *end = (const int64_t *)ends.buf;
    Py_ssize_t count = ends.len / (Py_ssize_t)sizeof(int64_t), size = 8;
    while (size < 2 * count)
        size *= 2;
    PyObject *result = PyBytes_FromStringAndSize(NULL, size * (Py_ssize_t)sizeof(int32_t));
    if (result != NULL) {
        int32_t *slot = (int32_t *)PyBytes_AS_STRING(result);
        for (Py_ssize_t i = 0; i < size; i++)
            slot[i] = EMPTY;
        const char *bytes = (const char *)words.buf;
        for (Py_ssize_t id = 0; id < count; id++) {
            int64_t start = id ? end[id - 1] : 0;
            Py_ssize_t at = fasttext_hash(bytes + start, end[id] - start) & (size - 1);
            while (slot[at] != EMPTY)
                at = (at + 1) & (size - 1);
            slot[at] = (int32_t)id;
        }
    }
    PyBuffer_Release(&words);
    PyBuffer_Release(&ends);
    return result;
}

typedef struct {
    const char *bytes;
    const int64_t *end;
    const int32_t *slot;
    Py_ssize_t size, entries;
} Dictionary;

/* The entry `word` is in the dictionary, or -1 (fastText's find). */
static int64_t find(const Dictionary *dictionary, const char *word, Py_ssize_t length, uint32_t hash) {
    Py_ssize_t at = hash & (dictionary->size - 1);
    for (; dictionary->slot[at] != EMPTY; at = (at + 1) & (dictionary->size - 1)) {
        int32_t id = dictionary->slot[at];
        int64_t start = id ? dictionary->end[id - 1] : 0;
        if (dictionary->end[id] - start == length && memcmp(dictionary->bytes + start, word, length) == 0)
            return id;
    }
    return -1;
}

/* What fastText's readWord splits words on, besides a line feed (which it reads as `</s>`). */
static int separator(char c) {
    return c == ' ' || c == '\r' || c == '\t' || c == '\v' || c == '\f' || c == '\0';
}

/* The rows of `line` (fastText's getLine and addWordNgrams) in `rows`, which has room for (length + 1) *
 * word_ngrams (a word takes a byte and a separator, `</s>` one more; each word has at most word_ngrams - 1
 * n-grams), using `hashes` (room for length + 1); their number. */
static Py_ssize_t line_rows(int64_t *rows, int64_t *hashes, const char *line, Py_ssize_t length,
                            const Dictionary *dictionary, int64_t nwords, int64_t bucket, int64_t word_ngrams) {
    Py_ssize_t at = 0, count = 0, words = 0;
    int ended = 0;
    while (!ended) {
        const char *word;
        Py_ssize_t word_length;
        while (at < length && separator(line[at]))
            at++;
        if (at >= length)
            break;
        if (line[at] == '\n') {
            word = END_OF_LINE;
            word_length = sizeof(END_OF_LINE) - 1;
        } else {
            Py_ssize_t start = at;
            while (at < length && !separator(line[at]) && line[at] != '\n')
                at++;
            word = line + start;
            word_length = at - start;
        }
        /* The line ends at `</s>`, read at a line feed or written in the text. */
        ended = word_length == sizeof(END_OF_LINE) - 1 && memcmp(word, END_OF_LINE, word_length) == 0;
        uint32_t hash = fasttext_hash(word, word_length);
        int64_t id = find(dictionary, word, word_length, hash);
        int label = id >= 0 ? id >= nwords
                            : word_length >= (Py_ssize_t)sizeof(LABEL_PREFIX) - 1
                                  && memcmp(word, LABEL_PREFIX, sizeof(LABEL_PREFIX) - 1) == 0;
        if (label)
            continue;
        if (id >= 0)
            rows[count++] = id;
        /* A word's hash is an int32 in fastText, and sign-extends into the n-grams' uint64. */
        hashes[words++] = (int64_t)(int32_t)hash;
    }
    for (Py_ssize_t i = 0; i < words; i++) {
        uint64_t mixed = (uint64_t)hashes[i];
        for (Py_ssize_t j = i + 1; j < words && j < i + word_ngrams; j++) {
            mixed = mixed * NGRAM_MIX + (uint64_t)hashes[j];
            rows[count++] = nwords + (int64_t)(mixed % (uint64_t)bucket);
        }
    }
    return count;
}

/* Asks for every cache line of a row. */
static void prefetch_row(const float *row, long long dim) {
    for (long long j = 0; j < dim; j += 64 / sizeof(float))
        __builtin_prefetch(row + j);
    __builtin_prefetch(row + dim - 1);
}

static PyObject *probabilities(PyObject *module, PyObject *args) {
    (void)module;
    Py_buffer line, words, ends, table, inputs, outputs;
    long long nwords, bucket, word_ngrams, dim;
    if (!PyArg_ParseTuple(args, "y*y*y*y*LLLy*y*L:probabilities", &line, &words, &ends, &table, &nwords, &bucket,
                          &word_ngrams, &inputs, &outputs, &dim))
        return NULL;
    Dictionary dictionary = {words.buf, ends.buf, table.buf, table.len / (Py_ssize_t)sizeof(int32_t),
                             ends.len / (Py_ssize_t)sizeof(int64_t)};
    Py_ssize_t rows_in = inputs.len / (Py_ssize_t)sizeof(float) / (dim > 0 ? dim : 1);
    Py_ssize_t labels = outputs.len / (Py_ssize_t)sizeof(float) / (dim > 0 ? dim : 1);
    PyObject *result = NULL;
    int64_t *rows = NULL, *hashes = NULL;
    float *hidden = NULL, *output = NULL;
    if (dim <= 0 || bucket < 0 || (bucket == 0 && word_ngrams > 1) || word_ngrams > 64 || rows_in != nwords + bucket
        || labels < 1 || dictionary.size < 8) {
        PyErr_SetString(PyExc_ValueError, "probabilities: the model's parts do not fit together");
        goto done;
    }
    rows = PyMem_Malloc((line.len + 1) * (word_ngrams > 1 ? word_ngrams : 1) * sizeof(int64_t));
    hashes = PyMem_Malloc((line.len + 1) * sizeof(int64_t));
    hidden = PyMem_Calloc(dim, sizeof(float));
    output = PyMem_Calloc(labels, sizeof(float));
    if (rows == NULL || hashes == NULL || hidden == NULL || output == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t count = line_rows(rows, hashes, (const char *)line.buf, line.len, &dictionary, nwords, bucket,
                                 word_ngrams);
    if (count == 0) {
        result = PyTuple_New(0);
        goto done;
    }
    const float *input = (const float *)inputs.buf, *weights = (const float *)outputs.buf;
    for (Py_ssize_t i = 0; i < count && i < AHEAD; i++)
        prefetch_row(input + rows[i] * dim, dim);
    for (Py_ssize_t i = 0; i < count; i++) {
        if (i + AHEAD < count)
            prefetch_row(input + rows[i + AHEAD] * dim, dim);
        const float *row = input + rows[i] * dim;
        for (long long j = 0; j < dim; j++)
            hidden[j] += row[j];
    }
    float scale = (float)(1.0 / (double)count);
    for (long long j = 0; j < dim; j++)
        hidden[j] *= scale;
    for (Py_ssize_t i = 0; i < labels; i++) {
        float dot = 0.0f;
        for (long long j = 0; j < dim; j++)
            dot += weights[i * dim + j] * hidden[j];
        if (isnan(dot)) {
            PyErr_SetString(PyExc_ValueError, "Encountered NaN.");
            goto done;
        }
        output[i] = dot;
    }
    float most = output[0], sum = 0.0f;
    for (Py_ssize_t i = 0; i < labels; i++)
        most = output[i] < most ? most : output[i];
    for (Py_ssize_t i = 0; i < labels; i++) {
        output[i] = (float)exp((double)(output[i] - most));
        sum += output[i];
    }
    result = PyTuple_New(labels);
    for (Py_ssize_t i = 0; result != NULL && i < labels; i++) {
        float logarithm = (float)log((double)(output[i] / sum) + 1e-5);
        PyObject *value = PyFloat_FromDouble((double)expf(logarithm));
        if (value == NULL)
            Py_CLEAR(result);
        else
            PyTuple_SET_ITEM(result, i, value);
    }
done:
    PyMem_Free(rows);
    PyMem_Free(hashes);
    PyMem_Free(hidden);
    PyMem_Free(output);
    PyBuffer_Release(&line);
    PyBuffer_Release(&words);
    PyBuffer_Release(&ends);
    PyBuffer_Release(&table);
    PyBuffer_Release(&inputs);
    PyBuffer_Release(&outputs);
    return result;
}

static PyMethodDef methods[] = {
    {"word_table", word_table, METH_VARARGS, "A model's dictionary in a table by fastText's hash."},
    {"probabilities", probabilities, METH_VARARGS, "Each label's probability for one line, as fastText's predict."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_classify", NULL, -1, methods};

PyMODINIT_FUNC PyInit__classify(void) {
    return PyModule_Create(&module);
}
