// Types the page's scripts share, for the type check only (JSDoc `@import`s erase at run time, so
// the viewer never serves this file).

/**
 * What `h` takes as children: nodes, strings and numbers (as text), nothing (null, undefined,
 * false), or arrays of these.
 */
export type Kid = Node | string | number | null | undefined | false | Kid[];
