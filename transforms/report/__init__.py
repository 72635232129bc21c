"""What a build says of itself: the run report (`report`, `report_transform`), the page to look at
(`report_page`, `report_page_transform`), the manifest (`manifest`, `manifest_transform`) and the progress notes
of a local run (`progress`)."""
