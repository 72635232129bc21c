/* The corpus's block format (transforms/corpus/blocks.py) in one pass each way.
 *
 * `to_html(blocks)` is `blocks_to_html`: `<div>` + the blocks, each escaped (`&`, `<`, `>`),
 * joined by `</div><div>` + `</div>`. `to_text(inner)` is what MinimizeText reads of a page's
 * `<div>` blocks (the markup between the first `<div>` and the last `</div>`): the blocks joined
 * by newlines and unescaped, with their count. Python's way makes a new string for each of the
 * three entities and for the boundaries; here the text is read once and written once.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

static const char OPEN[] = "<div>", CLOSE[] = "</div>", BOUNDARY[] = "</div><div>";
enum { OPEN_LENGTH = 5, CLOSE_LENGTH = 6, BOUNDARY_LENGTH = 11 };

static Py_ssize_t write_ascii(int kind, void *out, Py_ssize_t at, const char *text, Py_ssize_t length) {
    for (Py_ssize_t i = 0; i < length; i++)
        PyUnicode_WRITE(kind, out, at + i, (Py_UCS4)(unsigned char)text[i]);
    return at + length;
}

/* The position of the first character at or after `from` that is `first`, `second` or `third` (ASCII), or
 * `length`: one loop for each width of character, so that the compiler sees a plain array. */
static Py_ssize_t find_any(int kind, const void *data, Py_ssize_t from, Py_ssize_t length, Py_UCS4 first,
                           Py_UCS4 second, Py_UCS4 third) {
#define FIND(type)                                                                   \
    do {                                                                             \
        const type *text = (const type *)data;                                       \
        for (Py_ssize_t i = from; i < length; i++)                                   \
            if (text[i] == first || text[i] == second || text[i] == third)           \
                return i;                                                            \
        return length;                                                               \
    } while (0)
    if (kind == PyUnicode_1BYTE_KIND)
        FIND(Py_UCS1);
    if (kind == PyUnicode_2BYTE_KIND)
        FIND(Py_UCS2);
    FIND(Py_UCS4);
#undef FIND
}

/* The characters that `&`, `<` and `>` add to a block when escaped (4, 3 and 3 each): counted in runs of at most
 * 255 characters into byte-wide counters, which the compiler keeps in vector registers, then added up. */
static Py_ssize_t escaping_adds(int kind, const void *data, Py_ssize_t length) {
    Py_ssize_t adds = 0;
#define COUNT(type)                                                                  \
    do {                                                                             \
        const type *text = (const type *)data;                                       \
        for (Py_ssize_t i = 0; i < length;) {                                        \
            Py_ssize_t stop = length - i > 63 ? i + 63 : length;                    \
            unsigned char run = 0;                                                   \
            for (; i < stop; i++)                                                    \
                run += (text[i] == '&') * 4 + (text[i] == '<' || text[i] == '>') * 3; \
            adds += run;                                                             \
        }                                                                            \
    } while (0)
    if (kind == PyUnicode_1BYTE_KIND)
        COUNT(Py_UCS1);
    else if (kind == PyUnicode_2BYTE_KIND)
        COUNT(Py_UCS2);
    else
        COUNT(Py_UCS4);
#undef COUNT
    return adds;
}

static PyObject *to_html(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *blocks;
    if (!PyArg_ParseTuple(args, "O:to_html", &blocks))
        return NULL;
    PyObject *sequence = PySequence_Fast(blocks, "blocks must be a sequence");
    if (sequence == NULL)
        return NULL;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(sequence);
    if (count == 0) {
        Py_DECREF(sequence);
        return PyUnicode_New(0, 0);
    }
    Py_ssize_t size = OPEN_LENGTH + CLOSE_LENGTH + (count - 1) * BOUNDARY_LENGTH;
    Py_UCS4 widest = 0x7F;
    /* Whether each block has a character to escape: most have none, and are copied whole. */
    char *escaped = PyMem_Malloc((size_t)count);
    if (escaped == NULL) {
        Py_DECREF(sequence);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t b = 0; b < count; b++) {
        PyObject *block = PySequence_Fast_GET_ITEM(sequence, b);
        if (!PyUnicode_Check(block)) {
            PyMem_Free(escaped);
            Py_DECREF(sequence);
            PyErr_SetString(PyExc_TypeError, "blocks must be strings");
            return NULL;
        }
        Py_ssize_t length = PyUnicode_GET_LENGTH(block);
        Py_ssize_t adds = escaping_adds(PyUnicode_KIND(block), PyUnicode_DATA(block), length);
        escaped[b] = adds > 0;
        size += length + adds;
        Py_UCS4 block_widest = PyUnicode_MAX_CHAR_VALUE(block);
        if (block_widest > widest)
            widest = block_widest;
    }
    PyObject *result = PyUnicode_New(size, widest);
    if (result == NULL) {
        PyMem_Free(escaped);
        Py_DECREF(sequence);
        return NULL;
    }
    int out_kind = PyUnicode_KIND(result);
    void *out = PyUnicode_DATA(result);
    Py_ssize_t at = write_ascii(out_kind, out, 0, OPEN, OPEN_LENGTH);
    for (Py_ssize_t b = 0; b < count; b++) {
        PyObject *block = PySequence_Fast_GET_ITEM(sequence, b);
        if (b > 0)
            at = write_ascii(out_kind, out, at, BOUNDARY, BOUNDARY_LENGTH);
        Py_ssize_t length = PyUnicode_GET_LENGTH(block);
        int kind = PyUnicode_KIND(block);
        const void *data = PyUnicode_DATA(block);
        Py_ssize_t copied = 0;
        if (!escaped[b]) {
            if (kind == out_kind)
                memcpy((char *)out + at * out_kind, data, (size_t)length * kind);
            else if (length > 0 && PyUnicode_CopyCharacters(result, at, block, 0, length) < 0)
                goto error;
            at += length;
            continue;
        }
        while (copied < length) {
            Py_ssize_t special = find_any(kind, data, copied, length, '&', '<', '>');
            /* The run before it as it is (one copy where the kinds agree), then its entity. */
            if (special > copied && PyUnicode_CopyCharacters(result, at, block, copied, special - copied) < 0)
                goto error;
            at += special - copied;
            if (special == length)
                break;
            Py_UCS4 character = PyUnicode_READ(kind, data, special);
            at = character == '&' ? write_ascii(out_kind, out, at, "&amp;", 5)
                 : write_ascii(out_kind, out, at, character == '<' ? "&lt;" : "&gt;", 4);
            copied = special + 1;
        }
    }
    write_ascii(out_kind, out, at, CLOSE, CLOSE_LENGTH);
    PyMem_Free(escaped);
    Py_DECREF(sequence);
    return result;
error:
    PyMem_Free(escaped);
    Py_DECREF(result);
    Py_DECREF(sequence);
    return NULL;
}

/* Whether the ASCII `pattern` is at `i` of the string (`kind`, `data`, `length`). */
static int matches(int kind, const void *data, Py_ssize_t length, Py_ssize_t i, const char *pattern,
                   Py_ssize_t pattern_length) {
    if (i + pattern_length > length)
        return 0;
    for (Py_ssize_t j = 0; j < pattern_length; j++)
        if (PyUnicode_READ(kind, data, i + j) != (Py_UCS4)(unsigned char)pattern[j])
            return 0;
    return 1;
}

static PyObject *to_text(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *inner;
    if (!PyArg_ParseTuple(args, "U:to_text", &inner))
        return NULL;
    Py_ssize_t length = PyUnicode_GET_LENGTH(inner);
    int kind = PyUnicode_KIND(inner);
    const void *data = PyUnicode_DATA(inner);
    /* The text is never longer than the markup: written into a buffer of its kind (Python makes the string of
     * the narrowest kind that holds it). */
    char *buffer = PyMem_Malloc(length > 0 ? (size_t)length * kind : 1);
    if (buffer == NULL)
        return PyErr_NoMemory();
    Py_ssize_t at = 0, blocks = 1, copied = 0;
    while (copied < length) {
        /* (Two characters to find, not three: `&` is given twice.) */
        Py_ssize_t special = find_any(kind, data, copied, length, '&', '<', '&');
        memcpy(buffer + at * kind, (const char *)data + copied * kind, (size_t)(special - copied) * kind);
        at += special - copied;
        if (special == length)
            break;
        Py_UCS4 character = PyUnicode_READ(kind, data, special);
        Py_ssize_t step = 1;
        if (character == '<' && matches(kind, data, length, special, BOUNDARY, BOUNDARY_LENGTH)) {
            character = '\n';
            step = BOUNDARY_LENGTH;
            blocks++;
        } else if (character == '&') {
            if (matches(kind, data, length, special, "&lt;", 4)) {
                character = '<';
                step = 4;
            } else if (matches(kind, data, length, special, "&gt;", 4)) {
                character = '>';
                step = 4;
            } else if (matches(kind, data, length, special, "&amp;", 5)) {
                step = 5;
            }
        }
        PyUnicode_WRITE(kind, buffer, at++, character);
        copied = special + step;
    }
    PyObject *text = PyUnicode_FromKindAndData(kind, buffer, at);
    PyMem_Free(buffer);
    if (text == NULL)
        return NULL;
    return Py_BuildValue("(Nn)", text, blocks);
}

static PyMethodDef methods[] = {
    {"to_html", to_html, METH_VARARGS,
     "to_html(blocks) -> str: '<div>' + the blocks escaped (&, <, >) and joined by '</div><div>' + '</div>';\n"
     "'' for none."},
    {"to_text", to_text, METH_VARARGS,
     "to_text(inner) -> (text, count): the markup between a page's first <div> and last </div> as its\n"
     "blocks joined by newlines, unescaped, and how many blocks it holds."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_blocks", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__blocks(void) {
    return PyModule_Create(&module);
}
