// Package fetch gets one web page over http or https and turns it into
// text a model can read: HTML converted to Markdown, other text as it is.
// Every step is bounded: the body by a byte cap, the whole exchange by a
// timeout, redirects by count, and each redirect must stay on http(s) and
// on the first URL's host: a redirect elsewhere is returned to the caller,
// whose guard decides on the new host.
package fetch
