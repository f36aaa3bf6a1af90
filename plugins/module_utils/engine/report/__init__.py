"""What the user gets: the CertReport (certreport), built from the status through status/ and never from
reconcile/, and its renderings, one a file: junit.xml (junit), report.md (markdown), report.html (html, charts,
heatmap, pages); the fleet view over many clusters (fleet, fleet_md, fleet_html); the parts they share
(diagnose_report, comparison_text, remedies, text, textbox) and the report ConfigMap (snapshot)."""
