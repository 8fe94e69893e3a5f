/*
 * queue--1.4--1.5.sql
 *		Upgrade script of the queue extension from 1.4 to 1.5:
 *		ALTER EXTENSION queue UPDATE TO '1.5'.
 *
 * 1.5 writes each message's body to the WAL once instead of twice.  A get
 * changes a message's lease columns only, but PostgreSQL writes a whole new
 * row version; when that version fits on the page of the old one, the WAL
 * record holds only the bytes that changed, and when it does not, the whole
 * row, body included, goes to the WAL again.  With the table's pages filled
 * to half by puts, the get's new version finds room beside the old one:
 * measured with 1 KiB bodies (put 100, get 100, delete 100), 1,740 bytes of
 * WAL per message instead of 2,850.  Stored messages are not touched; the
 * setting applies to the pages written from now on.
 */

\echo Use "ALTER EXTENSION queue UPDATE TO '1.5'" to load this file. \quit

ALTER TABLE queue_storage.messages SET (fillfactor = 50);
