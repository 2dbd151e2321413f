// Shows how a failure is reported: the error, and the line it points at.
type Order = { id: number; total?: number };

function total(order: Order): number {
  if (order.total === undefined) {
    throw new TypeError(`order ${order.id} has no total`);
  }
  return order.total;
}

export default [{ id: 1, total: 5 }, { id: 2 }].map(total);
