"""The certification report: CertReport JSON, JUnit XML and Markdown."""
