import { describe, expect, it } from 'vitest';
import { renderTable } from './table.ts';

describe('renderTable', () => {
  it('pads every column to its widest cell, three spaces apart, with no trailing blanks', () => {
    const t = renderTable(
      ['NAME', 'STATUS', 'REASON'],
      [
        ['gateway/gw', 'True', 'Accepted'],
        ['httproute/a-long-name', 'False', 'BackendNotFound'],
      ],
    );
    expect(t.split('\n')).toEqual([
      'NAME                    STATUS   REASON',
      'gateway/gw              True     Accepted',
      'httproute/a-long-name   False    BackendNotFound',
    ]);
  });

  it('prints - for an empty cell unless the column says otherwise, and keeps one line per row', () => {
    const t = renderTable(
      [{ header: '', emptyAs: '' }, 'A', 'B'],
      [
        ['', '', 'two\nlines'],
        ['✗', 'x', ''],
      ],
    );
    expect(t.split('\n')).toEqual(['    A   B', '    -   two lines', '✗   x   -']);
  });

  it('cuts cells past a column maximum with an ellipsis', () => {
    const t = renderTable([{ header: 'DETAIL', max: 8 }], [['0123456789'], ['short']]);
    expect(t.split('\n')).toEqual(['DETAIL', '0123456…', 'short']);
  });
});
