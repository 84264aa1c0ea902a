import type { Atom } from './schema';

/**
 * A column value in a cached row: the atom ('atom' columns), the atom or undefined ('optional'),
 * a readonly array ('set') or a ReadonlyMap ('map'). uuid references are their string form.
 */
export type Value = Atom | undefined | readonly Atom[] | ReadonlyMap<Atom, Atom>;

/** An immutable cached row: a change replaces the whole object. Only selected columns are present. */
export interface Row {
  readonly _uuid: string;
  readonly [column: string]: Value;
}
