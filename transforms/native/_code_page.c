/* MinimizeText's code pages in C (see `CodePage` in transforms/stages/minimize_text.py).
 *
 * `translate(text, table)` does in one pass what `codecs.charmap_encode`, `bytes.translate` with
 * deletions and collapsing runs of spaces do one after the other: each character of `text` becomes
 * the byte that `table` gives it, or nothing, and a space right after a space is left out. With a
 * `mark`, a character the table does not have becomes that byte (`CodePage.marked_lines`).
 * CPython's charmap encoder looks each character up in a three-level map; here it is one index.
 *
 * `letters(text)` counts the letters of `text` as `_letters` does with the pattern `[\W\d_]+`: the
 * characters that are a word's (alphanumeric, as `str.isalnum`) and not a decimal digit, read by
 * the same Unicode database functions as Python's `re`, without making the text that is left.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

/* `table` holds one native uint16 per code point of the Basic Multilingual Plane. */
enum { TABLE_ENTRIES = 0x10000, DELETED = 0x100, NOT_IN_PAGE = 0xFFFF };

static PyObject *translate(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *text;
    Py_buffer table;
    int mark = -1;
    if (!PyArg_ParseTuple(args, "Uy*|i:translate", &text, &table, &mark))
        return NULL;
    if (mark > 0xFF) {
        PyBuffer_Release(&table);
        return PyErr_Format(PyExc_ValueError, "the mark must be a byte");
    }
    if (table.len != TABLE_ENTRIES * (Py_ssize_t)sizeof(uint16_t)) {
        PyBuffer_Release(&table);
        return PyErr_Format(PyExc_ValueError, "the table must hold %d uint16 entries", TABLE_ENTRIES);
    }
    const uint16_t *map = table.buf;
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    PyObject *result = PyBytes_FromStringAndSize(NULL, length);
    if (result == NULL) {
        PyBuffer_Release(&table);
        return NULL;
    }
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(result);
    Py_ssize_t written = 0;
    int in_page = 1;
    /* One loop per width of the string's characters. */
#define TRANSLATE(type)                                                                 \
    for (const type *p = data, *end = p + length; p < end; p++) {                      \
        uint16_t byte = *p < TABLE_ENTRIES ? map[*p] : NOT_IN_PAGE;                     \
        if (byte == NOT_IN_PAGE) {                                                      \
            if (mark < 0) {                                                             \
                in_page = 0;                                                            \
                break;                                                                  \
            }                                                                           \
            byte = (uint16_t)mark;                                                      \
        }                                                                               \
        if (byte == DELETED || (byte == ' ' && written > 0 && out[written - 1] == ' ')) \
            continue;                                                                   \
        out[written++] = (unsigned char)byte;                                           \
    }
    if (kind == PyUnicode_1BYTE_KIND)
        TRANSLATE(Py_UCS1)
    else if (kind == PyUnicode_2BYTE_KIND)
        TRANSLATE(Py_UCS2)
    else
        TRANSLATE(Py_UCS4)
#undef TRANSLATE
    if (!in_page) {
        Py_DECREF(result);
        PyBuffer_Release(&table);
        Py_RETURN_NONE;
    }
    PyBuffer_Release(&table);
    if (written != length && _PyBytes_Resize(&result, written) < 0)
        return NULL;
    return result;
}

/* Whether `re`'s `[\W\d_]` leaves `character` out: alphanumeric (`\w` without `_`) and not `\d`. */
static int letter(Py_UCS4 character) {
    if (character < 0x80)
        return (character >= 'a' && character <= 'z') || (character >= 'A' && character <= 'Z');
    return Py_UNICODE_ISALNUM(character) && !Py_UNICODE_ISDECIMAL(character);
}

static PyObject *letters(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *text;
    if (!PyArg_ParseTuple(args, "U:letters", &text))
        return NULL;
    Py_ssize_t length = PyUnicode_GET_LENGTH(text), count = 0;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    for (Py_ssize_t i = 0; i < length; i++)
        count += letter(PyUnicode_READ(kind, data, i));
    return PyLong_FromSsize_t(count);
}

static PyMethodDef methods[] = {
    {"translate", translate, METH_VARARGS,
     "translate(text, table[, mark]) -> bytes, or None when a character of text is not in the table\n"
     "(with mark, that byte stands for it). table: 65,536 native uint16, by code point: the byte, 0x100\n"
     "to leave it out, 0xFFFF not in the code page. Runs of spaces in the result collapse to one."},
    {"letters", letters, METH_VARARGS,
     "letters(text) -> int: how many characters of text are alphanumeric and not decimal digits\n"
     "(what re's [\\W\\d_] leaves out)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_code_page", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__code_page(void) {
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && (PyModule_AddIntConstant(m, "DELETED", DELETED) < 0
                      || PyModule_AddIntConstant(m, "NOT_IN_PAGE", NOT_IN_PAGE) < 0)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
