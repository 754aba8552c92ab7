// playwright-core's types name a few DOM types. The project compiles without the DOM library (it would change
// the stream and fetch types the Node code sees), so the names are declared here, opaque, as they are to
// code that runs in Node: the tests only pass page-side callbacks through them.
interface Node {}
interface HTMLElement extends Node {}
interface SVGElement extends Node {}
interface HTMLElementTagNameMap {}
