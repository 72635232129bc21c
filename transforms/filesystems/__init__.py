"""Files and where they are: the read-only https:// and http:// file system Beam reads through
(`http_filesystem`, on `http_session`), operations on exact paths never patterns (`exact_paths`), regular
files read in bounded pieces (`regular_files`), and names written without credentials (`locations`)."""
